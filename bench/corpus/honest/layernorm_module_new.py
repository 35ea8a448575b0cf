# rnx-corpus-case: kernel=layernorm_module expect=accept
# Honest KernelBench rewrite: the same LayerNorm parameters, normalisation written with var_mean and addcmul.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))
            self.norm.bias.copy_(0.1 * torch.randn(features))

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
        return torch.addcmul(self.norm.bias, (x - mean) * torch.rsqrt(var + self.norm.eps), self.norm.weight)
