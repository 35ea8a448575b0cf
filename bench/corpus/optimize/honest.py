# rnx-optimize-case: kernel=attention_heads verify=accept
# The honest rewrite: all heads at once, one batched matmul per step instead of a Python loop over heads.
import torch


def run(q, k, v):
    scale = q.shape[-1] ** -0.5
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(scores, dim=-1), v)
