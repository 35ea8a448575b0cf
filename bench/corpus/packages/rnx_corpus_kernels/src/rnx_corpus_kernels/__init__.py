"""Fused kernels for LLM-style layers: RMSNorm, SiLU-and-multiply and a row softmax.

On CUDA tensors each function launches a Triton kernel; on other devices it computes the same function with torch
operations. Like widely used kernel libraries, every public function is excluded from torch.compile's tracing at
import time (torch.compiler.disable), so a model that uses it can still be compiled around it.
"""
import torch

from . import _torch_ops

try:  # Triton is optional: without it (or without a GPU) the torch path serves every call.
    from . import _triton_ops
except ImportError:  # pragma: no cover - depends on the installation
    _triton_ops = None

__all__ = ["rms_norm", "silu_mul", "softmax"]
__version__ = "0.1.0"


def _on_gpu(*tensors):
    return _triton_ops is not None and all(t.is_cuda for t in tensors)


@torch.compiler.disable
def rms_norm(x, weight, eps=1e-6):
    """x / sqrt(mean(x^2, last dim) + eps) * weight."""
    if _on_gpu(x, weight):
        return _triton_ops.rms_norm(x, weight, eps)
    return _torch_ops.rms_norm(x, weight, eps)


@torch.compiler.disable
def silu_mul(gate, up):
    """silu(gate) * up, elementwise."""
    if _on_gpu(gate, up):
        return _triton_ops.silu_mul(gate, up)
    return _torch_ops.silu_mul(gate, up)


@torch.compiler.disable
def softmax(x):
    """Softmax over the last dimension."""
    if _on_gpu(x):
        return _triton_ops.softmax(x)
    return _torch_ops.softmax(x)
