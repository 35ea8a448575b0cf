# rnx-corpus-case: kernel=cumsum_long expect=accept
# Honest: a blocked scan: scan within blocks of 1024, then add each block's running offset.
import torch
import torch.nn.functional as F


def run(x):
    n = x.shape[-1]
    block = 1024
    padded = F.pad(x, (0, (-n) % block))
    blocks = padded.reshape(*x.shape[:-1], -1, block)
    inner = torch.cumsum(blocks, dim=-1)
    totals = inner[..., -1]
    offsets = torch.cumsum(totals, dim=-1) - totals
    out = inner + offsets.unsqueeze(-1)
    return out.reshape(*x.shape[:-1], -1)[..., :n]
