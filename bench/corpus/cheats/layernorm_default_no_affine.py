# rnx-corpus-case: kernel=layernorm_default expect=reject check=ignored_inputs
# Cheat (a shortcut real rewrites take): keeps the nn.LayerNorm, so its parameters have the reference's names and
# shapes, but normalises without them. Right while weight is all ones and bias all zeros, as they are built; wrong
# as soon as a trained model's values are loaded.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.ln = nn.LayerNorm(features)

    def forward(self, x):
        var, mean = torch.var_mean(x, dim=-1, keepdim=True, unbiased=False)
        return (x - mean) * torch.rsqrt(var + self.ln.eps)
