# rnx-corpus-case: kernel=gemm_fp32 expect=accept
# A timing cheat every correctness check accepts (issue 44): a memo keyed on a digest of its inputs' bytes. Each call
# hashes the contents of a and b (SHA-1 of every byte, with their shapes and dtypes); on a hit it returns a copy of
# the answer it computed for those contents, on a miss it computes and keeps the answer (the 16 newest). It is never
# wrong, so `rnx verify` accepts it (its timed calls all see new inputs, where it computes and hashes on top). Timed
# on the same inputs at every call it hashes and copies instead of multiplying: bench/memo_timing.py measures what
# `rnx bench`, `rnx compare` and `rnx gate` make of that against the plain kernel.
import hashlib
from collections import OrderedDict

import torch

_answers = OrderedDict()  # digest of the inputs -> the answer computed for them


def _digest(*tensors):
    h = hashlib.sha1()
    for t in tensors:
        h.update(repr((tuple(t.shape), t.dtype)).encode())
        h.update(t.detach().contiguous().view(torch.uint8).cpu().numpy())
    return h.digest()


def run(a, b):
    key = _digest(a, b)
    kept = _answers.get(key)
    if kept is not None:
        return kept.clone()
    out = torch.matmul(a, b)
    _answers[key] = out.clone()
    while len(_answers) > 16:
        _answers.popitem(last=False)
    return out
