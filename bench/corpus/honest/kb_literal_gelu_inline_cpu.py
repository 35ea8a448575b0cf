# rnx-corpus-case: kernel=kb_literal_gelu expect=review check=edge_cases cpu=only
# Honest, narrower contract (CPU): a load_inline C++ tanh GELU over the raw buffer, which refuses non-contiguous
# inputs with a clear error (the reference's own inputs are always contiguous: a stated narrowing, review).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CPP = r"""
#include <torch/extension.h>
#include <cmath>

torch::Tensor gelu_tanh(torch::Tensor x) {
  TORCH_CHECK(x.is_contiguous(), "gelu_tanh: inp must be contiguous");
  TORCH_CHECK(x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble, "gelu_tanh: float32 or float64");
  auto out = torch::empty_like(x);
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "gelu_tanh", [&] {
    const scalar_t* in = x.data_ptr<scalar_t>();
    scalar_t* o = out.data_ptr<scalar_t>();
    const scalar_t k = std::sqrt(scalar_t(2) / scalar_t(M_PI));
    at::parallel_for(0, x.numel(), 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const scalar_t v = in[i];
        o[i] = scalar_t(0.5) * v * (scalar_t(1) + std::tanh(k * (v + scalar_t(0.044715) * v * v * v)));
      }
    });
  });
  return out;
}
"""

_ext = load_inline(name="rnx_corpus_gelu_tanh_cpu", cpp_sources=_CPP, functions=["gelu_tanh"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return _ext.gelu_tanh(x)
