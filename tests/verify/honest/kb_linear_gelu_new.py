# rnx-verify-case: reference=refs/kb_linear_gelu.py expect=accept
# Honest KernelBench rewrite: addmm plus the exact erf form of GELU, same parameters as the reference.
import math

import torch


class ModelNew(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        h = torch.addmm(self.linear.bias, x.reshape(-1, x.shape[-1]), self.linear.weight.t())
        h = h.reshape(*x.shape[:-1], h.shape[-1])
        return 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))
