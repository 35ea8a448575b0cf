# rnx-corpus-case: kernel=conv1d_module expect=accept
# Honest KernelBench rewrite: the same parameters through F.conv1d without the bias, the bias added after.
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)

    def forward(self, x):
        y = F.conv1d(x, self.conv.weight, None, padding=self.conv.padding)
        return y + self.conv.bias[:, None]
