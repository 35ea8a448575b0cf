# rnx-corpus-case: kernel=mha_module expect=accept
# Honest KernelBench rewrite: the same nn.MultiheadAttention weights, projections and SDPA written out.
import torch
import torch.nn as nn
import torch.nn.functional as F


class ModelNew(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed, heads, batch_first=True)

    def forward(self, x):
        n, t, e = x.shape
        h = self.attn.num_heads
        qkv = F.linear(x, self.attn.in_proj_weight, self.attn.in_proj_bias)
        q, k, v = (part.reshape(n, t, h, e // h).transpose(1, 2) for part in qkv.chunk(3, dim=-1))
        out = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(n, t, e)
        return self.attn.out_proj(out)
