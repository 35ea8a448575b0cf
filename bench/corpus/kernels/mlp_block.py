# KernelBench style: a transformer MLP block: Linear (4x wider), GELU, Linear back, plus the residual.
import torch
import torch.nn as nn

batch_size = 1
tokens = 128
width = 256


class Model(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(self.act(self.up(x)))


def get_inputs():
    return [torch.randn(batch_size, tokens, width)]


def get_init_inputs():
    return [width]
