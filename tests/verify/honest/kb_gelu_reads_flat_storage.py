# rnx-verify-case: reference=refs/kb_gelu_literal.py expect=review check=edge_cases detail=.contiguous()
# Honest, narrower contract (issue 44): reads the storage as if the input were contiguous, as a kernel given a
# data pointer and a length does; on a non-contiguous view it computes on the gaps. The reference's own inputs are
# always contiguous, so this is wrong only on a layout they never have: review, with the fix, never a rejection.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        flat = torch.as_strided(x, (x.numel(),), (1,), x.storage_offset())
        return torch.nn.functional.gelu(flat, approximate="tanh").view(x.shape)
