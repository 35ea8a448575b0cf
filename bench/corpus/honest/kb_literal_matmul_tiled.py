# rnx-corpus-case: kernel=kb_literal_matmul expect=accept gpu=yes
# Honest (CUDA): a shared-memory tiled matrix product through load_inline (16 x 16 tiles, bounds-checked, so any
# M, K, N), inputs made contiguous first.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

_CUDA = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

constexpr int TILE = 16;

__global__ void matmul_kernel(const float* a, const float* b, float* c, int M, int K, int N) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y;
  const int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
    const int ka = t * TILE + threadIdx.x;
    const int kb = t * TILE + threadIdx.y;
    as[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? a[(int64_t)row * K + ka] : 0.f;
    bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? b[(int64_t)kb * N + col] : 0.f;
    __syncthreads();
    for (int i = 0; i < TILE; ++i) acc += as[threadIdx.y][i] * bs[i][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) c[(int64_t)row * N + col] = acc;
}

torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "matmul_cuda: shapes do not agree");
  TORCH_CHECK(a.scalar_type() == torch::kFloat && b.scalar_type() == torch::kFloat, "inp must be float32");
  a = a.contiguous();
  b = b.contiguous();
  const int M = a.size(0), K = a.size(1), N = b.size(1);
  auto c = torch::empty({M, N}, a.options());
  dim3 block(TILE, TILE);
  dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul_kernel<<<grid, block>>>(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), M, K, N);
  return c;
}
"""

_ext = load_inline(name="rnx_corpus_matmul_tiled", cpp_sources="torch::Tensor matmul_cuda(torch::Tensor a, torch::Tensor b);",
                   cuda_sources=_CUDA, functions=["matmul_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return _ext.matmul_cuda(a, b)
