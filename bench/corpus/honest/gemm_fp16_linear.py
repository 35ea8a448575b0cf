# rnx-corpus-case: kernel=gemm_fp16 expect=accept
# Honest: F.linear takes the weight in its stored (N, K) layout, no explicit transpose.
import torch.nn.functional as F


def run(a, w):
    return F.linear(a, w)
