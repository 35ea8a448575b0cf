# KernelBench level 1 style: nn.LayerNorm over a 2048-wide hidden dimension, with affine weights of its own.
import torch
import torch.nn as nn

batch_size = 1
tokens = 4096
hidden = 2048


class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.copy_(1.0 + 0.1 * torch.randn(hidden))
            self.ln.bias.copy_(0.1 * torch.randn(hidden))

    def forward(self, x):
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, tokens, hidden)]


def get_init_inputs():
    return [hidden]
