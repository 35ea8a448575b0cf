# KernelBench level 2 style: Conv2d (16 -> 64, 3x3, no padding) + GroupNorm (8 groups) + Tanh on 128x128 images.
import torch
import torch.nn as nn

batch_size = 1
in_channels = 16
out_channels = 64
kernel_size = 3
groups = 8
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, groups):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.gn = nn.GroupNorm(groups, out_channels)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(out_channels))
            self.gn.bias.copy_(0.1 * torch.randn(out_channels))

    def forward(self, x):
        return torch.tanh(self.gn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, groups]
