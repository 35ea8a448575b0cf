# Attention computed one head at a time (a Python loop over heads): the original that bench/optimize_cheats.py asks
# rnx optimize to rewrite. Per head it calls torch.softmax, which the sabotaging candidate slows down.
import torch


def run(q, k, v):
    scale = q.shape[-1] ** -0.5
    heads = []
    for h in range(q.shape[1]):
        scores = torch.matmul(q[:, h], k[:, h].transpose(-1, -2)) * scale
        heads.append(torch.matmul(torch.softmax(scores, dim=-1), v[:, h]))
    return torch.stack(heads, dim=1)
