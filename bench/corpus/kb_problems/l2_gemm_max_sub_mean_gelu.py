# KernelBench level 2 style: Gemm (1024 -> 2048) + max over the 128 tokens + subtract the feature mean + GELU.
import torch
import torch.nn as nn

batch_size = 1
tokens = 128
in_features = 1024
out_features = 2048


class Model(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)

    def forward(self, x):
        y = self.gemm(x)
        y = torch.max(y, dim=1).values
        y = y - y.mean(dim=-1, keepdim=True)
        return torch.nn.functional.gelu(y)


def get_inputs():
    return [torch.randn(batch_size, tokens, in_features)]


def get_init_inputs():
    return [in_features, out_features]
