# rnx-corpus-case: kernel=batchnorm2d_module expect=accept
# Honest KernelBench rewrite: inference batch norm folded into one per-channel scale and shift.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
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
        scale = self.bn.weight * torch.rsqrt(self.bn.running_var + self.bn.eps)
        shift = self.bn.bias - self.bn.running_mean * scale
        return x * scale[:, None, None] + shift[:, None, None]
