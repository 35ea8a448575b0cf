"""The functions in torch operations, for tensors Triton cannot take (CPU); accumulation in float32 at least."""
import torch


def rms_norm(x, weight, eps):
    acc = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    y = acc * torch.rsqrt(acc.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (y * weight).to(x.dtype)


def silu_mul(gate, up):
    return torch.nn.functional.silu(gate) * up


def softmax(x):
    acc = x.float() if x.dtype in (torch.float16, torch.bfloat16) else x
    return torch.softmax(acc, dim=-1).to(x.dtype)
