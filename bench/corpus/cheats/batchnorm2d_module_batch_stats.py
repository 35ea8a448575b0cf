# rnx-corpus-case: kernel=batchnorm2d_module expect=reject check=smoke
# Cheat: normalises with the batch's own statistics instead of the module's running ones (training-mode math).
import torch
import torch.nn as nn
import torch.nn.functional as F


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
        return F.batch_norm(x, None, None, self.bn.weight, self.bn.bias, training=True, eps=self.bn.eps)
