# rnx-corpus-case: kernel=groupnorm_module expect=accept
# Honest KernelBench rewrite: group statistics from a (N, G, -1) view, then the per-channel affine.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, groups, channels):
        super().__init__()
        self.gn = nn.GroupNorm(groups, channels)
        with torch.no_grad():
            self.gn.weight.copy_(1.0 + 0.1 * torch.randn(channels))
            self.gn.bias.copy_(0.1 * torch.randn(channels))

    def forward(self, x):
        n, c = x.shape[:2]
        g = x.reshape(n, self.gn.num_groups, -1)
        var, mean = torch.var_mean(g, dim=-1, keepdim=True, unbiased=False)
        y = ((g - mean) * torch.rsqrt(var + self.gn.eps)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.dim() - 2)
        return y * self.gn.weight.reshape(shape) + self.gn.bias.reshape(shape)
