# rnx-corpus-case: kernel=embedding expect=accept
# Honest KernelBench rewrite: index_select on the same table, reshaped to (batch, tokens, dim).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, vocab, dim):
        super().__init__()
        self.table = nn.Embedding(vocab, dim)

    def forward(self, ids):
        return torch.index_select(self.table.weight, 0, ids.reshape(-1)).reshape(*ids.shape, -1)
