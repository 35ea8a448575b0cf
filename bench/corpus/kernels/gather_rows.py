# KernelBench style: torch.gather along the last dimension with random integer indices.
import torch
import torch.nn as nn

batch_size = 1
rows = 512
width = 2048
picks = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        return torch.gather(x, -1, index)


def get_inputs():
    return [torch.randn(batch_size, rows, width), torch.randint(0, width, (batch_size, rows, picks))]


def get_init_inputs():
    return []
