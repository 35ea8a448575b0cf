# KernelBench level 1 style: elementwise ReLU over a (B x 4096 x 4096) tensor.
import torch
import torch.nn as nn

batch_size = 1
rows = 4096
cols = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, rows, cols)]


def get_init_inputs():
    return []
