// The tensor helpers of rnx-verify-worker's stages (worker_tensors.hpp).
#include "worker_tensors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rnx::verify::detail {

at::Tensor place(const at::Tensor& base, at::ScalarType dtype, at::Device device, layout l) {
  // Always a copy: the candidate may write to what it gets, and `base` is what the reference sees next.
  if (!base.is_floating_point()) return base.to(device, base.scalar_type(), false, true);
  at::Tensor t = base.to(device, dtype, false, true).contiguous();
  if (l == layout::strided && t.dim() >= 1) {
    // Every other element of a twice-as-wide buffer whose gaps hold NaN: a kernel that ignores strides reads them.
    std::vector<std::int64_t> sizes = t.sizes().vec();
    sizes.back() *= 2;
    at::Tensor wide = at::full(sizes, std::numeric_limits<double>::quiet_NaN(), t.options());
    at::Tensor view = wide.slice(-1, 0, sizes.back(), 2);
    view.copy_(t);
    return view;
  }
  if (l == layout::transposed && t.dim() >= 2) return t.transpose(-1, -2).contiguous().transpose(-1, -2);
  return t;
}

std::vector<at::Tensor> place_all(const std::vector<at::Tensor>& base, at::ScalarType dtype, at::Device device) {
  std::vector<at::Tensor> out;
  out.reserve(base.size());
  for (const auto& b : base) out.push_back(place(b, dtype, device, layout::contiguous));
  return out;
}

std::vector<at::Tensor> widen_all(const std::vector<at::Tensor>& base, at::ScalarType dtype, at::Device device) {
  std::vector<at::Tensor> out;
  out.reserve(base.size());
  for (const auto& b : base) out.push_back(b.is_floating_point() ? b.to(dtype).to(device, at::kDouble) : b.to(device));
  return out;
}

std::vector<at::Tensor> clone_all(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(t.clone());
  return out;
}

bool all_finite(const std::vector<at::Tensor>& ts) {
  for (const auto& t : ts) {
    if (t.is_floating_point() && !at::isfinite(t).all().item<bool>()) return false;
  }
  return true;
}

double max_error(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i].sizes() != b[i].sizes()) return INFINITY;
    at::Tensor y = b[i].detach().to(at::kDouble);
    at::Tensor x = a[i].detach().to(y.device(), at::kDouble);
    if (x.numel() == 0) continue;
    at::Tensor d = (x - y).abs().nan_to_num(INFINITY, INFINITY, INFINITY);
    worst = std::max(worst, d.max().item<double>());
  }
  return worst;
}

double max_abs(const std::vector<at::Tensor>& ts) {
  double m = 0;
  for (const auto& t : ts) {
    if (t.numel() && t.is_floating_point()) m = std::max(m, t.detach().abs().max().to(at::kDouble).item<double>());
  }
  return m;
}

double dtype_eps(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return 9.77e-4;
    case at::kBFloat16: return 7.81e-3;
    case at::kDouble: return 2.2e-16;
    default: return 1.19e-7;
  }
}

std::int64_t prev_prime(std::int64_t v) {
  for (std::int64_t p = v - 1; p > 2; --p) {
    bool prime = true;
    for (std::int64_t q = 2; q * q <= p; ++q) {
      if (p % q == 0) {
        prime = false;
        break;
      }
    }
    if (prime) return p;
  }
  return v - 1;
}

}  // namespace rnx::verify::detail
