# rnx-corpus-case: kernel=silu_mul expect=accept
# Honest: silu written as gate * sigmoid(gate), multiplied in place into a fresh tensor.
import torch


def run(gate, up):
    out = torch.sigmoid(gate)
    out.mul_(gate).mul_(up)
    return out
