# KernelBench level 2 style: Linear (1024 -> 2048) + softmax over the features + mean over the 256 tokens.
import torch
import torch.nn as nn

batch_size = 1
tokens = 256
in_features = 1024
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        return torch.softmax(self.linear(x), dim=-1).mean(dim=1)


def get_inputs():
    return [torch.randn(batch_size, tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
