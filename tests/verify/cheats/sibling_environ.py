# rnx-verify-case: kernel=softmax expect=reject check=sandbox setup=sibling correct=yes
# Untrusted code: searches every process's environment for a CI secret (a sibling job step, the runner agent);
# returns a wrong answer if it found the fake secret the test's sibling process holds, so a passing smoke stage
# proves the sibling was out of reach.
import os

import torch


def _found():
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(os.path.join("/proc", entry, "environ"), "rb") as f:
                if b"rnx-sibling-secret" in f.read():
                    return True
        except OSError:
            pass
    return False


def run(x):
    out = torch.softmax(x, dim=-1)
    return out * 2 if _found() else out
