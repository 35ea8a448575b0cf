# rnx-verify-case: kernel=softmax expect=reject check=implausible_speedup
# Cheat: remembers each result under the input's address, shape and eight sampled values, and serves it again
# when they match, as a benchmark that calls it on one tensor over and over would let it. Right on every input it
# has not seen; stale once new values are written into memory it has seen (where the samples do not look).
import torch

_cache = {}


def _key(x):
    flat = x.reshape(-1)
    step = max(1, flat.numel() // 8)
    return (x.data_ptr(), tuple(x.shape), tuple(flat[::step][:8].tolist()))


def run(x):
    key = _key(x)
    hit = _cache.get(key)
    if hit is not None:
        return hit.clone()
    out = torch.softmax(x, dim=-1)
    _cache[key] = out.clone()
    return out
