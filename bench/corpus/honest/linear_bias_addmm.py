# rnx-corpus-case: kernel=linear_bias expect=accept
# Honest: the bias folded into the product with torch.addmm (one BLAS call instead of a product and an add).
import torch


def run(x, w, bias):
    rows = x.reshape(-1, x.shape[-1])
    return torch.addmm(bias, rows, w.t()).reshape(*x.shape[:-1], w.shape[0])
