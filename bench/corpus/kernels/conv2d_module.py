# KernelBench style: nn.Conv2d (32 -> 64 channels, 3x3, padding 1) with a bias.
import torch
import torch.nn as nn

batch_size = 1
in_channels = 32
out_channels = 64
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels]
