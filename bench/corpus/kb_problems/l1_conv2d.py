# KernelBench level 1 style: nn.Conv2d (64 -> 128 channels, 3x3, stride 1, padding 1, bias) on 128x128 images.
import torch
import torch.nn as nn

batch_size = 1
in_channels = 64
out_channels = 128
kernel_size = 3
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
