# rnx-corpus-case: kernel=kb_literal_gelu expect=reject check=edge_cases
# Cheat (a silent defect): reads the input's storage as if it were contiguous, so on a non-contiguous view it
# computes on the gaps and returns wrong values without a word. Only a clear refusal narrows the contract.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = torch.as_strided(x, (x.numel(),), (1,), x.storage_offset())
        return torch.nn.functional.gelu(flat, approximate="tanh").view(x.shape)
