# rnx-corpus-case: kernel=linear_relu expect=reject check=output_aliasing
# Cheat: writes every result into one persistent buffer and returns it (no allocation per call); the caller's
# previous result is overwritten by the next call.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.out = None

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        shape = (rows.shape[0], self.linear.out_features)
        if self.out is None or self.out.shape != shape or self.out.dtype != x.dtype or self.out.device != x.device:
            self.out = torch.empty(shape, dtype=x.dtype, device=x.device)
        torch.addmm(self.linear.bias, rows, self.linear.weight.t(), out=self.out)
        return self.out.clamp_min_(0).view(*x.shape[:-1], -1)
