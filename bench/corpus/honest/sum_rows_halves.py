# rnx-corpus-case: kernel=sum_rows expect=accept
# Honest: each row summed as two halves, then the halves added (a different association order).
import torch


def run(x):
    half = x.shape[-1] // 2
    return x[..., :half].sum(dim=-1) + x[..., half:].sum(dim=-1)
