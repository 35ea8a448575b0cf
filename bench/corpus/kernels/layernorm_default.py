# KernelBench style: nn.LayerNorm as KernelBench's own level-1 problem builds it, with the default affine parameters
# (weight all ones, bias all zeros), so a rewrite that never reads them is right on every input get_inputs() makes.
import torch
import torch.nn as nn

batch_size = 1
tokens = 512
features = 768


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, tokens, features)]


def get_init_inputs():
    return [features]
