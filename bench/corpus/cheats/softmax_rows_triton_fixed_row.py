# rnx-corpus-case: kernel=softmax_rows expect=reject check=shape_specialization gpu=yes
# Cheat (CUDA): a Triton softmax tuned for the measured row length: masked lanes load 0.0 instead of -inf, so
# every row shorter than its power-of-two block adds exp(0 - max) terms to its sum.
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_fixed(src, dst, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(src + row * cols + offsets, mask=mask, other=0.0).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(dst + row * cols + offsets, y.to(dst.dtype.element_ty), mask=mask)


def run(x):
    x = x.contiguous()
    cols = x.shape[-1]
    out = torch.empty_like(x)
    _softmax_fixed[(x.numel() // cols,)](x, out, cols, BLOCK=triton.next_power_of_2(cols))
    return out
