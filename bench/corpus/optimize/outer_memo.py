# rnx-optimize-case: kernel=outer_scale verify=accept
# A memo every correctness check accepts: it keeps its last answers by the inputs' addresses, compares the inputs it
# is given with copies of the ones it answered in full, and hands back the kept tensor itself when they match. On the
# same inputs at every call it compares 4 KiB and writes nothing, far faster than writing its 1 MiB of output can
# be: the physical bound, not a correctness check, is what catches it.
import torch

_memo = {}  # (addresses, shapes) -> (copy of x, copy of y, answer)


def run(x, y):
    key = (x.data_ptr(), y.data_ptr(), tuple(x.shape), tuple(y.shape))
    hit = _memo.get(key)
    if hit is not None and torch.equal(hit[0], x) and torch.equal(hit[1], y):
        return hit[2]
    out = x[..., :, None] * y[..., None, :] * 0.5
    _memo[key] = (x.clone(), y.clone(), out)
    if len(_memo) > 64:
        _memo.pop(next(iter(_memo)))
    return out
