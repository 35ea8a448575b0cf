# KernelBench style with literal shapes: tanh-approximated GELU of one matrix (sizes written as numbers).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(2048, 1024)]


def get_init_inputs():
    return []
