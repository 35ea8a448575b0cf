# For runner.physics: a softmax that keeps its answer per input and hands the same tensor back when called on the
# same input address again (what rnx bench --same-inputs times). Its time is then a dictionary
# lookup, far below what writing the output takes: the physical bound must catch it.
import torch

_kept = {}


def run(x):
    key = (x.data_ptr(), tuple(x.shape))
    if key not in _kept:
        _kept[key] = torch.softmax(x, dim=-1)
    return _kept[key]
