# rnx-corpus-case: kernel=batched_gemm expect=accept
# Honest: the batch and group dimensions flattened into one torch.bmm.
import torch


def run(a, b):
    lead = a.shape[:-2]
    out = torch.bmm(a.reshape(-1, *a.shape[-2:]), b.reshape(-1, *b.shape[-2:]))
    return out.reshape(*lead, a.shape[-2], b.shape[-1])
