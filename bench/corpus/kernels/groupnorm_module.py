# KernelBench style: nn.GroupNorm (8 groups of 8 channels) with affine weights of its own.
import torch
import torch.nn as nn

batch_size = 1
channels = 64
height = 128
width = 128
groups = 8


class Model(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.gn.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x):
        return self.gn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [groups, channels]
