# rnx-optimize-case: kernel=attention_heads verify=accept
# The torch.compile rewrite, the first one anyone tries: all heads at once, compiled by inductor (a C++ kernel on
# the CPU, Triton on a GPU) at its first call. Nothing but the compiler differs from honest.py.
import torch


@torch.compile
def _attention(q, k, v):
    scale = q.shape[-1] ** -0.5
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    return torch.matmul(torch.softmax(scores, dim=-1), v)


def run(q, k, v):
    return _attention(q, k, v)
