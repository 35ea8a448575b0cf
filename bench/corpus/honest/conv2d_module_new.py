# rnx-corpus-case: kernel=conv2d_module expect=accept
# Honest KernelBench rewrite: the input in channels-last memory format, the same convolution on it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x):
        return self.conv(x.contiguous(memory_format=torch.channels_last)).contiguous()
