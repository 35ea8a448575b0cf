# Test kernel: right in float64, one NaN in every other dtype.
import torch


def run(x):
    out = x * 2
    if x.dtype != torch.float64:
        out = out.clone()
        out.view(-1)[3] = float("nan")
    return out
