# rnx-corpus-case: kernel=layernorm_module expect=reject check=smoke
# Cheat: skips the learned weight and bias (a cheaper normalisation that is right only for untrained weights).
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))
            self.norm.bias.copy_(0.1 * torch.randn(features))

    def forward(self, x):
        return F.layer_norm(x, x.shape[-1:], eps=self.norm.eps)
