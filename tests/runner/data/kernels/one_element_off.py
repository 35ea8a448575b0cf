# Test kernel: right in float64, 1e-3 off at one element in every other dtype (a divergence rounding cannot explain).
import torch


def run(x):
    out = torch.tanh(x)
    if x.dtype != torch.float64:
        out = out.clone()
        out.view(-1)[7] += 1e-3
    return out
