# rnx-verify-case: kernel=attention expect=reject check=stale_memory
# Cheat: skips the work and hands back an uninitialised buffer, hoping it still holds the reference's result.
import torch


def run(q, k, v):
    return torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
