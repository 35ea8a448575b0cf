# A slow attention: a Python loop over batch and heads, one small matmul pair per (batch, head).
import math

import torch


def run(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    batch, heads, _, dim = q.shape
    scale = 1.0 / math.sqrt(dim)
    out = torch.empty_like(q)
    for b in range(batch):
        for h in range(heads):
            scores = (q[b, h] @ k[b, h].transpose(0, 1)) * scale
            out[b, h] = torch.softmax(scores, dim=-1) @ v[b, h]
    return out
