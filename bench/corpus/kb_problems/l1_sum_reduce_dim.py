# KernelBench level 1 style: sum reduction over the middle dimension (keepdim) of a (B x 4096 x 2048) tensor.
import torch
import torch.nn as nn

batch_size = 1
dim1 = 4096
dim2 = 2048
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
