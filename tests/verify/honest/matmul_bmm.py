# rnx-verify-case: kernel=matmul expect=accept
# Honest rewrite: one batched matrix multiply instead of a Python loop over the batch.
import torch


def run(a, b):
    return torch.bmm(a, b)
