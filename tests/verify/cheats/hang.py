# rnx-verify-case: kernel=softmax expect=reject check=sandbox args=--timeout,15
# Untrusted code: never returns (a deadlock or a deliberate stall); the wall-clock limit must end it.
import time

import torch


def run(x):
    while True:
        time.sleep(1)
    return torch.softmax(x, dim=-1)
