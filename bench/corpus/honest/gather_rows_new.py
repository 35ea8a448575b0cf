# rnx-corpus-case: kernel=gather_rows expect=accept
# Honest KernelBench rewrite: advanced indexing over flattened rows instead of torch.gather.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, index):
        rows = x.reshape(-1, x.shape[-1])
        idx = index.reshape(rows.shape[0], -1)
        picked = rows[torch.arange(rows.shape[0], device=x.device)[:, None], idx]
        return picked.reshape(index.shape)
