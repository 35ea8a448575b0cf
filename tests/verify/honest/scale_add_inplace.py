# rnx-verify-case: kernel=scale_add expect=accept
# Honest rewrite: one fresh buffer updated in place (no temporaries); the inputs are never written.
import torch


def run(x, y):
    out = torch.mul(x, 2.0)
    out.add_(y)
    return out.clamp_(min=0)
