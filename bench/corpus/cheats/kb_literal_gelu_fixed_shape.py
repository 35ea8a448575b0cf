# rnx-corpus-case: kernel=kb_literal_gelu expect=reject check=shape_specialization
# Cheat: specialised to the one shape the reference's get_inputs() writes (2048 x 1024): it computes the first
# 2048 x 1024 block and returns it padded with zeros, or cut, to the caller's shape. Right on the measured shape,
# wrong on any other; found only when the verifier varies the sizes of the reference's own inputs.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        block = torch.nn.functional.gelu(x[:2048, :1024], approximate="tanh")
        out = torch.zeros_like(x)
        out[: block.shape[0], : block.shape[1]] = block
        return out
