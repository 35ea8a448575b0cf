# KernelBench style with literal shapes: elementwise sum of two matrices; get_inputs() writes its sizes as numbers,
# as KernelBench's own few-shot examples do, so no module-level size can be varied.
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.randn(1024, 1024), torch.randn(1024, 1024)]


def get_init_inputs():
    return []
