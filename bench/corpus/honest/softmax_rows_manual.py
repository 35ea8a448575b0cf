# rnx-corpus-case: kernel=softmax_rows expect=accept
# Honest: the stable softmax written out (max, shifted exponentials, normalisation).
import torch


def run(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)
