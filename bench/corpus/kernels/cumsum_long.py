# A scan over 32768 elements per row: float32 running sums whose rounding error grows along the row.
import torch


def run(x):
    return torch.cumsum(x, dim=-1)
