# rnx-verify-case: kernel=softmax expect=reject check=patched_globals
# Cheat: freezes the clock a harness might time with, so any kernel looks instantaneous.
# (The static scan sees the assignment and asks for review; patched_globals measures the patch and rejects it.)
import time

import torch

time.perf_counter = lambda: 0.0


def run(x):
    return torch.softmax(x, dim=-1)
