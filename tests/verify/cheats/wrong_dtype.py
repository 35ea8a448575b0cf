# rnx-verify-case: kernel=matmul expect=reject check=smoke
# Cheat: returns float64 (more accurate, and not what the caller asked for) instead of the input dtype.
import torch


def run(a, b):
    return torch.bmm(a.double(), b.double())
