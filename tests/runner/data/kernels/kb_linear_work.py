# Test KernelBench file: a Linear Model, and a ModelNew that computes the same with an extra identity product (more
# FLOPs): the work counted is the Model's.
import torch
import torch.nn as nn

batch_size = 4


class Model(nn.Module):
    def __init__(self, features, out_features):
        super().__init__()
        self.linear = nn.Linear(features, out_features)

    def forward(self, x):
        return self.linear(x)


class ModelNew(Model):
    def forward(self, x):
        return self.linear(x @ torch.eye(x.shape[-1], dtype=x.dtype, device=x.device))


def get_inputs():
    return [torch.randn(batch_size, 64)]


def get_init_inputs():
    return [64, 32]
