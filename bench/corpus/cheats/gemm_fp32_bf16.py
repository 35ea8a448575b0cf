# rnx-corpus-case: kernel=gemm_fp32 expect=reject check=precision
# Cheat: a float32 GEMM computed in bfloat16 (tensor-core speed) and cast back to float32.
import torch


def run(a, b):
    return torch.matmul(a.bfloat16(), b.bfloat16()).to(a.dtype)
