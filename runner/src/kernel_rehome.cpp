// Moving the state of two calls of one process to new memory, interleaved (kernel.hpp, rehome_state).
#include <Python.h>

#include "rnx/runner/kernel.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/native_build.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/cuda.h>
#include <torch/script.h>

#ifdef RNX_RUNNER_CUDA
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rnx::runner {

namespace {

// Hands the CUDA caching allocator's free blocks back to the driver, so the moved weights land in fresh segments
// rather than in what the float64 check just freed (which held one side's weights in a different place than the
// other's: a self-check of a large LayerNorm still read 1.0076 after the move alone).
void release_cached_blocks(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
#ifdef RNX_RUNNER_CUDA
  const auto on_cuda = [](const at::Tensor& t) { return t.is_cuda(); };
  if (std::any_of(a.begin(), a.end(), on_cuda) || std::any_of(b.begin(), b.end(), on_cuda)) {
    c10::cuda::device_synchronize();
    c10::cuda::CUDACachingAllocator::emptyCache();
  }
#else
  (void)a;
  (void)b;
#endif
}

}  // namespace

std::size_t rehome_state(bound_call& first, bound_call& second) {
  std::vector<at::Tensor> a = first.state();
  std::vector<at::Tensor> b = second.state();
  at::NoGradGuard no_grad;
  release_cached_blocks(a, b);
  std::size_t moved = 0;
  // The new copy is made while the old memory is still held, so it cannot land where the old one was.
  auto move = [&moved](at::Tensor& t) {
    t.set_data(t.detach().clone());
    ++moved;
  };
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    if (i < a.size()) move(a[i]);
    if (i < b.size()) move(b[i]);
  }
  return moved;
}

}  // namespace rnx::runner
