# rnx-corpus-case: kernel=cumsum_long expect=reject check=shape_specialization
# Cheat: the measured batches (1 and 4) get the real scan; any other batch gets only its first row scanned.
import torch


def run(x):
    if x.shape[0] in (1, 4):
        return torch.cumsum(x, dim=-1)
    out = torch.zeros_like(x)
    out[:1] = torch.cumsum(x[:1], dim=-1)
    return out
