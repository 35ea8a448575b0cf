# Test kernel: right in eager, 1e-3 off everywhere once traced (the torchscript runtime): a runtime-specific divergence.
import torch


def run(x):
    y = x * 2
    if torch.jit.is_tracing():
        y = y + 1e-3
    return y
