// The reference check of a call's outputs: shapes, dtypes and values within a tolerance.
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

#include "kernel_forms.hpp"

namespace rnx::runner {

using detail::shape_text;

check_result compare_outputs(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref, tolerance tol) {
  check_result r;
  if (out.size() != ref.size()) {
    r.ok = false;
    r.max_abs_err = INFINITY;
    r.rel_err = INFINITY;
    r.message = "the kernel returned " + std::to_string(out.size()) + " output(s) but the float64 reference returned " +
                std::to_string(ref.size());
    return r;
  }
  double ref_max = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].sizes() != ref[i].sizes()) {
      r.ok = false;
      r.max_abs_err = INFINITY;
      r.rel_err = INFINITY;
      r.message = "output " + std::to_string(i) + " has shape " + shape_text(out[i]) + " but the reference has " +
                  shape_text(ref[i]);
      return r;
    }
    // On the reference's device: a GPU compares tens of millions of elements in float64 in milliseconds, the CPU
    // after a copy in about a second. Three float64 temporaries of the output's size, the rest in place (one per step
    // held up to six at once: 1.6 GB for a 33.5 M-element output). `e` and `o` may be the very tensors given
    // (already float64), so neither is written.
    at::Tensor e = ref[i].detach().to(at::kDouble);
    at::Tensor o = out[i].detach().to(e.device(), at::kDouble);
    at::Tensor diff = at::sub(o, e).abs_();
    at::Tensor exact = o.eq(e);  // equal infinities count as close, as in torch.testing
    at::Tensor bound = e.abs();
    if (e.numel()) ref_max = std::max(ref_max, at::nan_to_num(bound, 0, 0, 0).max().item<double>());
    bound.mul_(tol.rtol).add_(tol.atol);  // atol + rtol * |e|
    at::Tensor close = diff.le(bound).logical_or_(exact);
    const std::int64_t bad = close.numel() - close.sum().item<std::int64_t>();
    diff.masked_fill_(exact, 0);
    const double max_abs = diff.numel() ? diff.nan_to_num_(INFINITY, INFINITY).max().item<double>() : 0.0;
    r.max_abs_err = std::max(r.max_abs_err, max_abs);
    if (bad > 0 && r.ok) {
      r.ok = false;
      at::Tensor flat = close.logical_not().flatten().nonzero();
      std::int64_t first = flat[0][0].item<std::int64_t>();
      std::ostringstream os;
      os.precision(6);
      os << "output " << i << ": " << bad << " of " << o.numel() << " elements outside rtol=" << tol.rtol
         << ", atol=" << tol.atol << "; first at flat index " << first << ": got " << o.flatten()[first].item<double>()
         << ", expected " << e.flatten()[first].item<double>();
      r.message = os.str();
    }
  }
  r.rel_err = ref_max > 0 ? r.max_abs_err / ref_max : r.max_abs_err;
  if (!r.ok) {
    std::ostringstream os;
    os.precision(3);
    os << " (max abs err " << r.max_abs_err << ", rel err " << r.rel_err << ")";
    r.message += os.str();
  }
  return r;
}

}  // namespace rnx::runner
