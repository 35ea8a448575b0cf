# Reference: a batch of matrix products, one Python-level product per batch element.
import torch


def run(a, b):
    return torch.stack([a[i] @ b[i] for i in range(a.shape[0])])
