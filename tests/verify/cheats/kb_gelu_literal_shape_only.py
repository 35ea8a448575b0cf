# rnx-verify-case: reference=refs/kb_gelu_literal.py expect=reject check=shape_specialization
# Cheat: specialised to the one shape the reference's get_inputs() writes as numbers (48 x 40): the first 48 x 40
# block computed, the rest left zero. The verifier varies the sizes of the reference's own inputs to find it.
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        out = torch.zeros_like(x)
        block = torch.nn.functional.gelu(x[:48, :40], approximate="tanh")
        out[: block.shape[0], : block.shape[1]] = block
        return out
