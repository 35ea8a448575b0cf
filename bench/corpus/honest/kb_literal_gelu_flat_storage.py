# rnx-corpus-case: kernel=kb_literal_gelu expect=review check=edge_cases
# Honest, narrower contract: reads the input's storage as if it were contiguous, so on a non-contiguous view it
# computes on the gaps. The reference's own inputs are always contiguous: wrong only on a layout they never have,
# so review with the fix, never a rejection (issue 44; a cheat until then).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = torch.as_strided(x, (x.numel(),), (1,), x.storage_offset())
        return torch.nn.functional.gelu(flat, approximate="tanh").view(x.shape)
