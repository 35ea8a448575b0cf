# rnx-verify-case: kernel=scale_add expect=accept gpu=yes
# Honest CUDA rewrite: a hand-written elementwise kernel (built at import by load_inline) on the current stream.
from torch.utils.cpp_extension import load_inline

_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void scale_add_relu(const float* x, const float* y, float* out, long n) {
  long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = 2.0f * x[i] + y[i];
    out[i] = v > 0.0f ? v : 0.0f;
  }
}

torch::Tensor scale_add(torch::Tensor x, torch::Tensor y) {
  auto xc = x.contiguous();
  auto yc = y.contiguous();
  auto out = torch::empty_like(xc);
  long n = xc.numel();
  int threads = 256;
  long blocks = (n + threads - 1) / threads;
  scale_add_relu<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
      xc.data_ptr<float>(), yc.data_ptr<float>(), out.data_ptr<float>(), n);
  return out;
}
"""

_ext = load_inline(name="rnx_verify_scale_add", cpp_sources="torch::Tensor scale_add(torch::Tensor x, torch::Tensor y);",
                   cuda_sources=_source, functions=["scale_add"], extra_cuda_cflags=["-O2"])


def run(x, y):
    return _ext.scale_add(x, y)
