# rnx-verify-case: kernel=attention expect=reject check=stale_memory gpu=yes
# CUDA cheat: allocates an output of the reference's size and returns it unwritten; the caching allocator
# hands back the block the reference's result was just freed from, which still holds the right numbers.
import torch


def run(q, k, v):
    return torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
