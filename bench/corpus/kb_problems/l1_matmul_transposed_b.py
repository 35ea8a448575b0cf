# KernelBench level 1 style: A (2048 x 4096) times the transpose of B (2048 x 4096), B stored row-major.
import torch
import torch.nn as nn

batch_size = 1
m = 2048
k = 4096
n = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b.t())


def get_inputs():
    return [torch.randn(batch_size, m, k), torch.randn(n, k)]


def get_init_inputs():
    return []
