# rnx-verify-case: kernel=matmul expect=accept
# Honest rewrite: the same batched product through einsum (a different kernel and accumulation order).
import torch


def run(a, b):
    return torch.einsum("bik,bkj->bij", a, b)
