# rnx-corpus-case: kernel=sdpa expect=reject check=stale_memory
# Cheat: does no work and returns a fresh uninitialised buffer, betting it still holds the reference's output.
import torch


def run(q, k, v):
    return torch.empty_like(q)
