# KernelBench style: nn.Conv1d (64 -> 128 channels, kernel 5, same padding) with a bias.
import torch
import torch.nn as nn

batch_size = 1
in_channels = 64
out_channels = 128
length = 1024
kernel_size = 5


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(batch_size, in_channels, length)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
