# rnx-corpus-case: kernel=softmax_rows expect=reject check=fresh_inputs
# Cheat: computes the first call's answer once per shape and returns it for every later call.
import torch

_seen = {}


def run(x):
    key = (tuple(x.shape), x.dtype, x.device)
    if key not in _seen:
        _seen[key] = torch.softmax(x, dim=-1)
    return _seen[key].clone()
