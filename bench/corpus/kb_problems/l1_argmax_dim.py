# KernelBench level 1 style: argmax over the middle dimension of a (B x 1024 x 4096) tensor (int64 output).
import torch
import torch.nn as nn

batch_size = 1
dim1 = 1024
dim2 = 4096
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.argmax(x, dim=self.dim)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
