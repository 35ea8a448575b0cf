# rnx-verify-case: kernel=softmax expect=reject check=stability
# Cheat: drops the max subtraction to save a reduction; exp overflows once inputs are large.
import torch


def run(x):
    e = torch.exp(x)
    return e / e.sum(dim=-1, keepdim=True)
