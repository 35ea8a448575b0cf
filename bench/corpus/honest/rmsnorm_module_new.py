# rnx-corpus-case: kernel=rmsnorm_module expect=accept
# Honest KernelBench rewrite: rsqrt of the mean square, one multiply by the weight.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight
