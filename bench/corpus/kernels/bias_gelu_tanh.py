# Bias add followed by a hand-written tanh GELU: a chain of eight elementwise operations.
import math

import torch


def run(x, bias):
    y = x + bias
    inner = math.sqrt(2.0 / math.pi) * (y + 0.044715 * y * y * y)
    return 0.5 * y * (1.0 + torch.tanh(inner))
