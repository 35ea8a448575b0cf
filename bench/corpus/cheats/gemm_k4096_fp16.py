# rnx-corpus-case: kernel=gemm_k4096 expect=reject check=precision
# Cheat: the 4096-long float32 reduction done in float16 operands, the result cast back to float32.
import torch


def run(a, b):
    return torch.matmul(a.half(), b.half()).to(a.dtype)
