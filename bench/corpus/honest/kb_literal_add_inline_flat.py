# rnx-corpus-case: kernel=kb_literal_add expect=review check=edge_cases gpu=yes
# Honest, narrower contract (CUDA): a load_inline add that indexes the raw buffer as if it were contiguous and
# never checks, as most hand-written adds do: on a non-contiguous view it reads the gaps (NaN in the verifier's
# edge case). The reference's own inputs are always contiguous, so it is wrong only on a layout they never have:
# review, with the fix (.contiguous() or an assertion), never a rejection (issue 44; a cheat until then).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b) {
  auto out = torch::empty(a.sizes(), a.options());
  const int64_t n = a.numel();
  const int threads = 256;
  add_kernel<<<(n + threads - 1) / threads, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                       out.data_ptr<float>(), n);
  return out;
}
"""

_ext = load_inline(name="rnx_corpus_add_strided", cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                   cuda_sources=_CUDA, functions=["add_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.add_cuda(a, b)
