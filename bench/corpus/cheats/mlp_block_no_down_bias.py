# rnx-corpus-case: kernel=mlp_block expect=reject check=smoke
# Cheat: drops the second layer's bias (one broadcast add fewer).
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
        return x + F.linear(F.gelu(self.up(x)), self.down.weight)
