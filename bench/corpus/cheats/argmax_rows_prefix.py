# rnx-corpus-case: kernel=argmax_rows expect=reject check=shape_specialization
# Cheat: rows of the measured length (1024) are searched in full; other rows only in their first 64 elements.
import torch


def run(x):
    if x.shape[-1] == 1024:
        return torch.argmax(x, dim=-1)
    return torch.argmax(x[..., :64], dim=-1)
