# Reference in KernelBench form: RMSNorm over the last dimension with a learned weight.
import torch

batch_size = 4
tokens = 24
features = 40


class Model(torch.nn.Module):
    def __init__(self, features, eps):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(1.0 + 0.1 * torch.randn(features))

    def forward(self, x):
        return x / torch.sqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    return [torch.randn(batch_size, tokens, features)]


def get_init_inputs():
    return [features, 1e-6]
