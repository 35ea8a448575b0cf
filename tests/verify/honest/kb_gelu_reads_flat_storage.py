# rnx-verify-case: reference=refs/kb_gelu_literal.py expect=reject check=edge_cases
# Cheat (a silent defect): reads the storage as if the input were contiguous; on a non-contiguous view it computes
# on the gaps and returns wrong values without a word. Only a clear refusal narrows the contract.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = torch.as_strided(x, (x.numel(),), (1,), x.storage_offset())
        return torch.nn.functional.gelu(flat, approximate="tanh").view(x.shape)
