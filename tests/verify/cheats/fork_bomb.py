# rnx-verify-case: kernel=softmax expect=reject check=sandbox
# Untrusted code: a fork bomb started from inside the kernel call.
import os

import torch


def run(x):
    for _ in range(64):
        try:
            if os.fork() == 0:
                while True:
                    os.fork()
        except OSError:
            break
    return torch.softmax(x, dim=-1)
