# rnx-corpus-case: kernel=linear_relu expect=accept
# Honest KernelBench rewrite: addmm on the folded rows, ReLU applied in place on the fresh result.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = torch.addmm(self.linear.bias, x.reshape(-1, x.shape[-1]), self.linear.weight.t())
        return y.clamp_min_(0).reshape(*x.shape[:-1], -1)
