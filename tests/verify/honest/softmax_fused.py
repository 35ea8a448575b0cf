# rnx-verify-case: kernel=softmax expect=accept
# Honest rewrite: a hand-fused, numerically stable softmax (subtract the row max, exponentiate in place).
import torch


def run(x):
    shifted = x - x.amax(dim=-1, keepdim=True)
    shifted.exp_()
    return shifted.div_(shifted.sum(dim=-1, keepdim=True))
