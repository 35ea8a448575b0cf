# rnx-verify-case: kernel=attention expect=reject check=stale_memory gpu=yes
# CUDA cheat: a kernel whose grid covers only the first half of the query rows; the rest of the output is
# whatever the (cached) buffer held.
import torch
import torch.nn.functional as F


def run(q, k, v):
    out = torch.empty(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    half = q.shape[-2] // 2
    out[..., :half, :] = F.scaled_dot_product_attention(q[..., :half, :], k, v)
    return out
