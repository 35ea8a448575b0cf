# rnx-verify-case: kernel=attention expect=accept
# Honest rewrite: keys processed in blocks with an online softmax (flash-attention style), so the reduction
# over keys happens in a different order from the reference's.
import math

import torch


def run(q, k, v):
    scale = 1.0 / math.sqrt(q.shape[-1])
    block = 8
    running_max = torch.full(q.shape[:-1] + (1,), float("-inf"), dtype=q.dtype, device=q.device)
    running_sum = torch.zeros_like(running_max)
    acc = torch.zeros(q.shape[:-1] + (v.shape[-1],), dtype=q.dtype, device=q.device)
    for start in range(0, k.shape[-2], block):
        kb = k[..., start:start + block, :]
        vb = v[..., start:start + block, :]
        s = torch.matmul(q, kb.transpose(-2, -1)) * scale
        new_max = torch.maximum(running_max, s.amax(dim=-1, keepdim=True))
        correction = torch.exp(running_max - new_max)
        p = torch.exp(s - new_max)
        running_sum = running_sum * correction + p.sum(dim=-1, keepdim=True)
        acc = acc * correction + torch.matmul(p, vb)
        running_max = new_max
    return acc / running_sum
