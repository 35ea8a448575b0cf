# The faster rewrite of softmax.py: torch's fused softmax kernel, one pass for the max/sum and one to write.
import torch


def run(x: torch.Tensor) -> torch.Tensor:
    return torch.softmax(x, dim=-1)
