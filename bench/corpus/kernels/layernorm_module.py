# KernelBench style: nn.LayerNorm over the last dimension, with weights and biases of its own (not 1 and 0).
import torch
import torch.nn as nn

batch_size = 1
tokens = 1024
features = 1024


class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.norm = nn.LayerNorm(features)
        with torch.no_grad():
            self.norm.weight.copy_(1.0 + 0.1 * torch.randn(features))
            self.norm.bias.copy_(0.1 * torch.randn(features))

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(batch_size, tokens, features)]


def get_init_inputs():
    return [features]
