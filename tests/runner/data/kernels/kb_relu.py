# Test KernelBench file: Model with a weight, ModelNew equal to it, get_inputs with batch_size.
import torch
import torch.nn as nn

batch_size = 4


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return torch.relu(self.linear(x))


class ModelNew(Model):
    pass


def get_inputs():
    return [torch.randn(batch_size, 32)]


def get_init_inputs():
    return [32]
