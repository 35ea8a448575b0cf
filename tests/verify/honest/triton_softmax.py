# rnx-verify-case: kernel=softmax expect=accept gpu=yes
# Honest rewrite in Triton (issue 20): a row softmax, one program per row, JIT-compiled at the first call inside
# the sandbox (ptxas and the launcher's C compiler run as processes; the cache lives in scratch).
import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < cols
    values = tl.load(x_ptr + row * x_stride + offsets, mask=mask, other=-float("inf")).to(tl.float32)
    values = values - tl.max(values, axis=0)
    numerator = tl.exp(values)
    result = numerator / tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * out_stride + offsets, result.to(out_ptr.dtype.element_ty), mask=mask)


def run(x):
    rows = x.reshape(-1, x.shape[-1])
    if not rows.is_contiguous():
        rows = rows.contiguous()
    out = torch.empty_like(rows)
    if rows.numel() == 0:
        return out.reshape(x.shape)
    _softmax_rows[(rows.shape[0],)](rows, out, rows.shape[1], rows.stride(0), out.stride(0),
                                    BLOCK=triton.next_power_of_2(rows.shape[1]))
    return out.reshape(x.shape)
