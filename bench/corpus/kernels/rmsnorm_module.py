# KernelBench style: RMSNorm (root mean square over the last dimension, times a learned weight).
import torch
import torch.nn as nn

batch_size = 1
tokens = 1024
features = 1024


class Model(nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x):
        rms = torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x / rms * self.weight


def get_inputs():
    return [torch.randn(batch_size, tokens, features)]


def get_init_inputs():
    return [features, 1e-6]
