# rnx-corpus-case: kernel=silu_mul expect=accept gpu=yes
# Honest (CUDA): silu(gate) * up fused in one Triton kernel, computed in float32 and rounded once on the store.
import torch
import triton
import triton.language as tl


@triton.jit
def _fused(g_ptr, u_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(u_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(o_ptr + offs, (g * tl.sigmoid(g) * u).to(o_ptr.dtype.element_ty), mask=mask)


def run(gate, up):
    gate = gate.contiguous()
    up = up.contiguous()
    out = torch.empty_like(gate)
    n = gate.numel()
    if n:
        _fused[(triton.cdiv(n, 2048),)](gate, up, out, n, BLOCK=2048)
    return out
