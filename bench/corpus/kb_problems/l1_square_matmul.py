# KernelBench level 1 style: square 2048 x 2048 matrix product, A of shape (batch_size x 2048 x 2048) times one B.
import torch
import torch.nn as nn

batch_size = 1
n = 2048


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(batch_size, n, n), torch.randn(n, n)]


def get_init_inputs():
    return []
