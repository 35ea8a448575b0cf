# KernelBench level 2 style: Linear (2048 -> 2048) + GELU + residual add of the input, over B x 512 tokens.
import torch
import torch.nn as nn

batch_size = 1
tokens = 512
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.linear = nn.Linear(hidden, hidden)
        self.act = nn.GELU()

    def forward(self, x):
        return x + self.act(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, tokens, hidden)]


def get_init_inputs():
    return [hidden]
