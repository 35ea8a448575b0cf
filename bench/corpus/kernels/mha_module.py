# KernelBench style: nn.MultiheadAttention (self-attention, 8 heads, batch first), attention output only.
import torch
import torch.nn as nn

batch_size = 1
tokens = 256
embed = 256
heads = 8


class Model(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed, heads, batch_first=True)

    def forward(self, x):
        out, _ = self.attn(x, x, x, need_weights=False)
        return out


def get_inputs():
    return [torch.randn(batch_size, tokens, embed)]


def get_init_inputs():
    return [embed, heads]
