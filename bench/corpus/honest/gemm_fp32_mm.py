# rnx-corpus-case: kernel=gemm_fp32 expect=accept
# Honest: the batch folded into the rows, one torch.mm, the result unfolded.
import torch


def run(a, b):
    rows = a.reshape(-1, a.shape[-1])
    return torch.mm(rows, b).reshape(*a.shape[:-1], b.shape[-1])
