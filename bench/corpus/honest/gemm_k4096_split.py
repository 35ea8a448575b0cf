# rnx-corpus-case: kernel=gemm_k4096 expect=accept
# Honest: the 4096-long reduction split in four K-chunks whose partial products are summed (split-K).
import torch


def run(a, b):
    k = a.shape[-1]
    step = (k + 3) // 4
    out = None
    for start in range(0, k, step):
        part = torch.matmul(a[..., start:start + step], b[start:start + step])
        out = part if out is None else out + part
    return out
