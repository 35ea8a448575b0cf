# rnx-corpus-case: kernel=mlp_block expect=accept
# Honest KernelBench rewrite: the same two Linear layers, the residual fused into the second with addmm.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.up = nn.Linear(width, 4 * width)
        self.act = nn.GELU()
        self.down = nn.Linear(4 * width, width)

    def forward(self, x):
        rows = x.reshape(-1, x.shape[-1])
        hidden = F.gelu(F.linear(rows, self.up.weight, self.up.bias))
        out = torch.addmm(rows + self.down.bias, hidden, self.down.weight.t())
        return out.reshape(x.shape)
