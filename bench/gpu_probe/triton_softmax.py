"""A Triton row softmax, called once and checked: the workload for seccomp_probe.c."""
import os, sys, torch, triton, triton.language as tl

@triton.jit
def softmax_kernel(out_ptr, in_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n_cols + offs, mask=offs < n_cols, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * n_cols + offs, e / tl.sum(e, axis=0), mask=offs < n_cols)

x = torch.randn(256, 1000, device="cuda")
y = torch.empty_like(x)
softmax_kernel[(x.shape[0],)](y, x, x.shape[1], BLOCK=1024)
torch.cuda.synchronize()
print("triton softmax max err", (y - torch.softmax(x, 1)).abs().max().item(), "cache", os.environ.get("TRITON_CACHE_DIR"))
