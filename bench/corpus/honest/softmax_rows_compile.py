# rnx-corpus-case: kernel=softmax_rows expect=accept
# Honest: the softmax written out and handed to torch.compile (inductor fuses max, exp, sum and divide into one
# loop per row): the first rewrite an engineer or a model tries. Compiled at the first call, on CPU and GPU alike.
import torch


@torch.compile
def _softmax(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    e = shifted.exp()
    return e / e.sum(dim=-1, keepdim=True)


def run(x):
    return _softmax(x)
