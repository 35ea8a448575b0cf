# rnx-corpus-case: kernel=softmax_rows expect=accept gpu=yes
# Honest (CUDA): a Triton row softmax launched from run(x), one program per row, masked to the row length.
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_kernel(src, dst, row_stride, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    x = tl.load(src + row * row_stride + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(dst + row * row_stride + offsets, y.to(dst.dtype.element_ty), mask=mask)


def run(x):
    x = x.contiguous()
    cols = x.shape[-1]
    out = torch.empty_like(x)
    if x.numel() == 0:
        return out
    _softmax_kernel[(x.numel() // cols,)](x, out, cols, cols, BLOCK=triton.next_power_of_2(cols))
    return out
