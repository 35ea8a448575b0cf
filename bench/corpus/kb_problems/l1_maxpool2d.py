# KernelBench level 1 style: nn.MaxPool2d (3x3 window, stride 2, padding 1) over 64-channel 256x256 maps.
import torch
import torch.nn as nn

batch_size = 1
channels = 64
height = 256
width = 256
kernel_size = 3
stride = 2
padding = 1


class Model(nn.Module):
    def __init__(self, kernel_size, stride, padding):
        super().__init__()
        self.pool = nn.MaxPool2d(kernel_size, stride=stride, padding=padding)

    def forward(self, x):
        return self.pool(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [kernel_size, stride, padding]
