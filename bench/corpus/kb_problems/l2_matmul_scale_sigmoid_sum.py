# KernelBench level 2 style: matmul (B x 1024 by 1024 x 4096) + scale + sigmoid-weighted sum over the features.
import torch
import torch.nn as nn

batch_size = 1
in_features = 1024
out_features = 4096
scale = 0.5


class Model(nn.Module):
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(in_features, out_features) / in_features ** 0.5)
        self.scale = scale

    def forward(self, x):
        h = torch.matmul(x, self.weight) * self.scale
        return torch.sum(h * torch.sigmoid(h), dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, scale]
