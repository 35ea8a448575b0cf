# rnx-verify-case: kernel=softmax expect=reject check=sandbox detail=process correct=yes
# Untrusted code, point 2 of issue 21 (root): starts 700 processes (`sleep`, small ones) that outlive the call
# (the 512-task limit did not bind a candidate that was uid 0 on the host). Returns a wrong answer if more than
# 600 could be started; the ones that were are found after the call, ended, and fail the sandbox row.
import subprocess

import torch


_started = None  # the first call's count: later calls start nothing (the flood is the point, once)


def _flood():
    started = 0
    for _ in range(700):
        try:
            subprocess.Popen(["sleep", "60"])
        except OSError:
            break
        started += 1
    return started


def run(x):
    global _started
    if _started is None:
        _started = _flood()
    out = torch.softmax(x, dim=-1)
    return out * 2 if _started > 600 else out
