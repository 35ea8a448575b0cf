# rnx-corpus-case: kernel=silu_mul expect=reject check=ignored_inputs
# Cheat: keeps the first `up` it sees per shape and reuses it (a benchmark that feeds one input set never notices).
import torch.nn.functional as F

_up = {}


def run(gate, up):
    key = (tuple(up.shape), up.dtype, up.device)
    if key not in _up:
        _up[key] = up.clone()
    return F.silu(gate) * _up[key]
