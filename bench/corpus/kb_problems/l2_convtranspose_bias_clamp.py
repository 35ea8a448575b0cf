# KernelBench level 2 style: ConvTranspose2d (64 -> 32, 4x4, stride 2) + per-channel bias add + clamp to [-1, 1].
import torch
import torch.nn as nn

batch_size = 1
in_channels = 64
out_channels = 32
kernel_size = 4
stride = 2
padding = 1
height = 64
width = 64


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, padding):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.bias = nn.Parameter(0.1 * torch.randn(out_channels, 1, 1))

    def forward(self, x):
        return torch.clamp(self.deconv(x) + self.bias, min=-1.0, max=1.0)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding]
