# rnx-verify-case: kernel=softmax expect=reject check=fresh_inputs
# Cheat: computes once, then returns the remembered result for every later call (a benchmark sees one input).
import torch

_cache = {}


def run(x):
    key = tuple(x.shape)
    if key not in _cache:
        _cache[key] = torch.softmax(x, dim=-1)
    return _cache[key]
