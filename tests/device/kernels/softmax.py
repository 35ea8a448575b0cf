# A hand-written, numerically stable softmax over the last dimension: four passes over memory.
import torch


def run(x: torch.Tensor) -> torch.Tensor:
    shifted = x - x.max(dim=-1, keepdim=True).values
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)
