# For runner.fresh_inputs: a rewrite (ModelNew) of a product (Model, its float64 reference) that computes its first
# call's answer and hands back a copy of it for every later input of the same shape. Right on the first inputs it
# meets (the reference check's), wrong on every other; its untimed answers are the same copy, so only a second
# checked input set can tell.
import torch


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a @ b


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = {}

    def forward(self, a, b):
        key = (tuple(a.shape), tuple(b.shape), a.dtype)
        if key not in self.first:
            self.first[key] = a @ b
        return self.first[key].clone()


def get_inputs():
    return [torch.randn(32, 64), torch.randn(64, 16)]


def get_init_inputs():
    return []
