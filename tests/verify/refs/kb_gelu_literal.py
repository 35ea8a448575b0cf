# Reference in KernelBench form with literal shapes (get_inputs() writes its sizes as numbers, as KernelBench's own
# examples do): tanh-approximated GELU of a 48 x 40 matrix.
import torch


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_inputs():
    return [torch.randn(48, 40)]


def get_init_inputs():
    return []
