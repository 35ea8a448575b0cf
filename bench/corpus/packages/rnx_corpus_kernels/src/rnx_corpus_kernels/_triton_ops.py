"""Triton kernels: one program per row (rms_norm, softmax) or per block of elements (silu_mul), float32 inside."""
import torch
import triton
import triton.language as tl


@triton.jit
def _rms_norm_kernel(src, weight, dst, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(src + row * cols + offsets, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(weight + offsets, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
    tl.store(dst + row * cols + offsets, (x * inv * w).to(dst.dtype.element_ty), mask=mask)


@triton.jit
def _silu_mul_kernel(gate, up, dst, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    g = tl.load(gate + offsets, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up + offsets, mask=mask, other=0.0).to(tl.float32)
    tl.store(dst + offsets, (g / (1.0 + tl.exp(-g)) * u).to(dst.dtype.element_ty), mask=mask)


@triton.jit
def _softmax_kernel(src, dst, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(src + row * cols + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(dst + row * cols + offsets, (e / tl.sum(e, axis=0)).to(dst.dtype.element_ty), mask=mask)


def rms_norm(x, weight, eps):
    x = x.contiguous()
    out = torch.empty_like(x)
    cols = x.shape[-1]
    if x.numel():
        _rms_norm_kernel[(x.numel() // cols,)](x, weight.contiguous(), out, cols, eps,
                                               BLOCK=triton.next_power_of_2(cols))
    return out


def silu_mul(gate, up):
    gate, up = torch.broadcast_tensors(gate, up)
    gate, up = gate.contiguous(), up.contiguous()
    out = torch.empty_like(gate)
    n = gate.numel()
    if n:
        _silu_mul_kernel[(triton.cdiv(n, 1024),)](gate, up, out, n, BLOCK=1024)
    return out


def softmax(x):
    x = x.contiguous()
    out = torch.empty_like(x)
    cols = x.shape[-1]
    if x.numel():
        _softmax_kernel[(x.numel() // cols,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
    return out
