# rnx-verify-case: kernel=rowsum expect=accept
# Honest rewrite: the reduction split into partial sums over strided chunks, then combined (another order).
import torch


def run(x):
    n = x.shape[-1]
    chunks = 5 if n % 5 == 0 else 1
    partial = (x * x).reshape(*x.shape[:-1], n // chunks, chunks).sum(dim=-2)
    return partial.sum(dim=-1) * 0.5
