# The original of bench/optimize_cheats.py --run bound: a scaled outer product of two rows, 1 MiB of output from
# 4 KiB of input, so writing the output is nearly the whole cost of a call.
import torch


def run(x, y):
    return x[..., :, None] * y[..., None, :] * 0.5
