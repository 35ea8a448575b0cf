# rnx-corpus-case: kernel=layernorm_default expect=accept
# Honest: the same normalisation written out, the affine applied with one addcmul from the module's own parameters.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
        normed = (x - mean) * torch.rsqrt(var + self.ln.eps)
        return torch.addcmul(self.ln.bias, normed, self.ln.weight)
