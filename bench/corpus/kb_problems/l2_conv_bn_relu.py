# KernelBench level 2 style: Conv2d (32 -> 64, 3x3, no bias) + BatchNorm2d in eval mode + ReLU on 128x128 images.
import torch
import torch.nn as nn

batch_size = 1
in_channels = 32
out_channels = 64
kernel_size = 3
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        with torch.no_grad():
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(out_channels))
            self.bn.bias.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_mean.copy_(0.1 * torch.randn(out_channels))
            self.bn.running_var.copy_(1.0 + 0.5 * torch.rand(out_channels))
        # Inference semantics: BatchNorm uses its running statistics and never updates them.
        self.eval()

    def forward(self, x):
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
