# Compute-bound: one large matrix product.
import torch


def run(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a @ b
