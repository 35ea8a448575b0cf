# KernelBench style with literal shapes: a (512 x 768) by (768 x 256) matrix product (sizes written as numbers).
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(512, 768), torch.randn(768, 256)]


def get_init_inputs():
    return []
