# KernelBench style: nn.BatchNorm2d in inference mode, with running statistics and affine weights of its own.
import torch
import torch.nn as nn

batch_size = 1
channels = 128
height = 128
width = 128


class Model(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.bn = nn.BatchNorm2d(channels)
        with torch.no_grad():
            self.bn.running_mean.copy_(0.5 * torch.randn(channels))
            self.bn.running_var.copy_(0.5 + torch.rand(channels))
            self.bn.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.bn.bias.copy_(0.1 * torch.randn(channels))
        self.bn.eval()

    def forward(self, x):
        return self.bn(x)


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
