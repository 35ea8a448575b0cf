# rnx-corpus-case: kernel=conv2d_fn expect=accept
# Honest: im2col (F.unfold) and one matrix product per image, then folded back to (C_out, H, W).
import torch
import torch.nn.functional as F


def run(x, w):
    n, _, h, width = x.shape
    kh, kw = w.shape[-2:]
    cols = F.unfold(x, (kh, kw), padding=1)
    out = torch.matmul(w.reshape(w.shape[0], -1), cols)
    return out.reshape(n, w.shape[0], h + 3 - kh, width + 3 - kw)
