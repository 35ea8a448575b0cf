# rnx-corpus-case: kernel=kb_literal_add expect=review check=edge_cases gpu=yes
# Honest, narrower contract (CUDA): a load_inline elementwise add in the style of KernelBench's few-shot answer,
# which refuses non-contiguous inputs with a clear error. The reference's own inputs are always contiguous, so
# this is a stated narrowing of the contract (review), not a wrong answer.
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
  TORCH_CHECK(a.is_contiguous() && b.is_contiguous(), "inp must be contiguous");
  TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "inp must be float32");
  auto out = torch::empty_like(a);
  const int64_t n = a.numel();
  const int threads = 256;
  add_kernel<<<(n + threads - 1) / threads, threads>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                       out.data_ptr<float>(), n);
  return out;
}
"""

_ext = load_inline(name="rnx_corpus_add_checked", cpp_sources="torch::Tensor add_cuda(torch::Tensor a, torch::Tensor b);",
                   cuda_sources=_CUDA, functions=["add_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.add_cuda(a, b)
