// The floating-point yardstick shared by the runner's reference check and rnx verify (see tolerance.hpp).
#include "rnx/runner/tolerance.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/record_function.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>

namespace rnx::runner {

namespace {

double dtype_eps(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return 9.765625e-4;     // 2^-10
    case at::kBFloat16: return 7.8125e-3;   // 2^-7
    case at::kDouble: return 2.220446e-16;  // 2^-52
    default: return 1.1920929e-7;           // float32, 2^-23
  }
}

// |a - b| in float64 on b's device (the reference's).
at::Tensor abs_errors(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor wide_b = b.detach().to(at::kDouble);
  return (a.detach().to(wide_b.device(), at::kDouble) - wide_b).abs();
}

// Whether an output is compared with its reference: both there, floating-point, non-empty and of one shape.
bool comparable(const at::Tensor& out, const at::Tensor& ref) {
  return out.defined() && ref.defined() && out.sizes() == ref.sizes() && out.is_floating_point() && out.numel() > 0;
}

// abs_errors flattened, over the elements where the difference is finite (copied out only where some is not: on
// tens of millions of elements the copy costs more than the difference).
at::Tensor finite_errors(const at::Tensor& a, const at::Tensor& b) {
  at::Tensor d = abs_errors(a, b).flatten();
  const at::Tensor finite = at::isfinite(d);
  return finite.all().item<bool>() ? d : d.masked_select(finite);
}

// The largest finite |a - b| over the comparable outputs (0 when there is none): the errors are not zero or more
// where they are not finite, so a non-finite one reads 0 and never wins.
double largest_finite_error(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref) {
  double largest = 0;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!comparable(out[i], ref[i])) continue;
    largest = std::max(largest, at::nan_to_num(abs_errors(out[i], ref[i]), 0.0, 0.0, 0.0).max().item<double>());
  }
  return largest;
}

// The element of rank `rank` (from 0) of `values` in ascending order. kthvalue on a CUDA device selects within
// one thread block per slice, which on one flat slice of tens of millions of errors takes a second; a device sort
// takes milliseconds there. On the CPU kthvalue's selection is the faster.
double ranked(const at::Tensor& values, std::int64_t rank) {
  if (values.is_cuda()) return std::get<0>(at::sort(values)).select(0, rank).item<double>();
  return std::get<0>(values.kthvalue(rank + 1)).item<double>();
}

// Every finite error of the comparable outputs, in one flat tensor.
at::Tensor all_errors(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref) {
  std::vector<at::Tensor> parts;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (comparable(out[i], ref[i])) parts.push_back(finite_errors(out[i], ref[i]));
  }
  if (parts.empty()) return at::empty({0}, at::TensorOptions().dtype(at::kDouble));
  if (parts.size() == 1) return parts.front();
  const at::Device on = parts.front().device();
  for (auto& p : parts) p = p.to(on);
  return at::cat(parts);
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

}  // namespace

std::string_view to_string(yard_basis basis) {
  switch (basis) {
    case yard_basis::trusted_reference: return "trusted_reference";
    case yard_basis::self_check: return "self_check";
  }
  return "self_check";
}

bool tf32_allowed(at::ScalarType dtype, at::Device device) {
  if (dtype != at::kFloat || !device.is_cuda()) return false;
  return at::globalContext().allowTF32CuDNN() || at::globalContext().allowTF32CuBLAS();
}

namespace {

thread_local tf32_families* recording = nullptr;

// RecordFunction's start callback (a plain function: the families go to this thread's `recording`).
// The ATen operators whose products cuBLAS may round to TF32 (the matmul family, and what calls it).
bool matmul_family(std::string_view op) {
  static constexpr std::string_view names[] = {"mm",     "addmm",  "bmm",    "baddbmm",   "addbmm", "_addmm_activation",
                                               "matmul", "linear", "einsum", "tensordot", "mv",     "addmv"};
  return std::find(std::begin(names), std::end(names), op) != std::end(names) ||
         op.find("scaled_dot_product") != std::string_view::npos;
}

// The convolutions cuDNN may run in TF32 (conv1d/2d/3d, conv_transpose*, convolution, cudnn_convolution, ...); not
// the _convert_* operators that share the prefix.
bool convolution_family(std::string_view op) {
  return op.find("conv") != std::string_view::npos && op.find("convert") == std::string_view::npos;
}

// RecordFunction's start callback (a plain function: the families go to this thread's `recording`).
std::unique_ptr<at::ObserverContext> note_family(const at::RecordFunction& fn) {
  if (!recording) return nullptr;
  const std::string_view name(fn.name());
  if (!name.starts_with("aten::")) return nullptr;
  const std::string_view op = name.substr(6);
  if (convolution_family(op)) recording->convolution = true;
  if (matmul_family(op)) recording->matmul = true;
  return nullptr;
}

}  // namespace

tf32_families families_during(const std::function<void()>& call) {
  tf32_families used;
  tf32_families* outer = recording;
  recording = &used;
  const at::CallbackHandle handle =
      at::addThreadLocalCallback(at::RecordFunctionCallback(&note_family).scopes({at::RecordScope::FUNCTION}));
  try {
    call();
  } catch (...) {
    at::removeCallback(handle);
    recording = outer;
    throw;
  }
  at::removeCallback(handle);
  recording = outer;
  return used;
}

bool tf32_reaches(const tf32_families& used, at::ScalarType dtype, at::Device device) {
  if (dtype != at::kFloat || !device.is_cuda()) return false;
  const auto& ctx = at::globalContext();
  return (used.convolution && ctx.allowTF32CuDNN()) || (used.matmul && ctx.allowTF32CuBLAS());
}

double arithmetic_eps(at::ScalarType dtype, at::Device device) {
  return tf32_allowed(dtype, device) ? 9.765625e-4 : dtype_eps(dtype);  // TF32: 2^-10
}

std::vector<at::Tensor> rounding_perturbed(const std::vector<at::Tensor>& inputs, double eps, std::uint64_t seed) {
  std::optional<at::Generator> gen;  // on the first floating input's device
  std::vector<at::Tensor> out;
  out.reserve(inputs.size());
  for (const auto& t : inputs) {
    if (!t.is_floating_point()) {
      out.push_back(t);
      continue;
    }
    at::Tensor wide = t.detach().to(at::kDouble);
    if (!gen) gen = seeded_generator(wide.device(), seed ^ 0x5DEECE66DULL);
    at::Tensor u =
        at::rand(wide.sizes(), *gen, at::TensorOptions().dtype(at::kDouble).device(gen->device())).to(wide.device());
    out.push_back(wide * (1.0 + eps * (2.0 * u - 1.0)));
  }
  return out;
}

yardstick measure_yardstick(const std::vector<at::Tensor>& eager, const std::vector<at::Tensor>& ref64,
                            at::ScalarType dtype, const std::vector<at::Tensor>* perturbed_ref64, bool tf32) {
  yardstick y;
  y.dtype = dtype;
  y.tf32 = tf32;
  at::Tensor errors = all_errors(eager, ref64);
  y.elements = errors.numel();
  if (y.elements > 0) {
    y.largest = errors.max().item<double>();
    // Lower rank of the 99th percentile: index floor(0.99 * (n - 1)) of the sorted errors.
    const std::int64_t rank = static_cast<std::int64_t>(std::floor(0.99 * static_cast<double>(y.elements - 1)));
    y.typical = ranked(errors, rank);
  }
  if (perturbed_ref64) y.input_rounding = largest_finite_error(*perturbed_ref64, ref64);
  return y;
}

double yard_value(const yardstick& y, yard_basis basis) {
  if (basis == yard_basis::trusted_reference) {
    // Where TF32 is allowed, the reference's library may have chosen an exact float32 algorithm while an equally
    // legitimate one (another layout, another cuDNN algorithm) rounds its products to TF32: that rounding is granted.
    return y.tf32 && y.input_rounding ? std::max(y.largest, *y.input_rounding) : y.largest;
  }
  double v = y.typical;
  if (y.input_rounding) v = std::min(v, rounding_explains * *y.input_rounding);
  return v;
}

tolerance widen(tolerance base, const yardstick& y, yard_basis basis) {
  base.atol = std::max(base.atol, yard_factor * yard_value(y, basis));
  return base;
}

std::string describe(tolerance base, const yardstick& y, yard_basis basis) {
  const tolerance applied = widen(base, y, basis);
  const std::string dt(dtype_name(y.dtype));
  std::string own =
      basis == yard_basis::trusted_reference
          ? "the eager " + dt + " reference's largest error against float64, " + number(y.largest)
          : "the eager " + dt + " computation's 99th-percentile error against float64, " + number(y.typical);
  if (basis == yard_basis::trusted_reference && y.tf32 && y.input_rounding && *y.input_rounding > y.largest) {
    own += ", or the " + number(*y.input_rounding) +
           " that rounding the inputs to TF32 (allowed for float32 on CUDA) moves the float64 result, the larger";
  }
  std::string capped;
  if (basis == yard_basis::self_check && y.input_rounding && rounding_explains * *y.input_rounding < y.typical) {
    capped = ", counted only up to " + number(rounding_explains) + "x the " + number(*y.input_rounding) +
             " that rounding the inputs to " + (y.tf32 ? "TF32 (allowed for float32 on CUDA)" : dt) +
             " moves the float64 result (" + number(rounding_explains * *y.input_rounding) + ")";
  }
  std::ostringstream os;
  os.precision(3);
  os << "rtol=" << applied.rtol << ", atol=" << applied.atol;
  if (applied.atol > base.atol) {
    os << " (the base rtol=" << base.rtol << ", atol=" << base.atol << " with atol widened to " << number(yard_factor)
       << "x " << own << capped << ")";
  } else {
    os << " (the base tolerance; " << number(yard_factor) << "x " << own << capped << " is below its atol)";
  }
  return os.str();
}

namespace {

// How many elements of the floating outputs lie outside `tol` (torch.testing's rule), and how many were compared.
std::pair<std::int64_t, std::int64_t> count_outside(const std::vector<at::Tensor>& out,
                                                    const std::vector<at::Tensor>& ref, tolerance tol) {
  std::int64_t outside = 0;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < out.size() && i < ref.size(); ++i) {
    if (!comparable(out[i], ref[i])) continue;  // an empty output has nothing outside
    at::Tensor e = ref[i].detach().to(at::kDouble);
    at::Tensor o = out[i].detach().to(e.device(), at::kDouble);
    at::Tensor close = (o - e).abs().le(tol.atol + tol.rtol * e.abs()).logical_or(o.eq(e));
    outside += close.logical_not().sum().item<std::int64_t>();
    total += o.numel();
  }
  return {outside, total};
}

}  // namespace

check_result check_within(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref64, tolerance base,
                          const yardstick& y, yard_basis basis) {
  const tolerance applied = widen(base, y, basis);
  check_result r = compare_outputs(out, ref64, applied);
  if (!r.ok && basis == yard_basis::self_check) {
    tolerance tail = applied;
    tail.atol *= tail_factor;
    check_result loose = compare_outputs(out, ref64, tail);
    const auto [outside, total] = count_outside(out, ref64, applied);
    if (loose.ok && static_cast<double>(total) * tail_share >= 1 &&
        static_cast<double>(outside) <= tail_share * static_cast<double>(total)) {
      loose.message = std::to_string(outside) + " of " + std::to_string(total) + " elements beyond the tolerance, " +
                      "within the tail allowance (" + number(tail_factor) + "x atol for at most " +
                      number(100 * tail_share) + "% of the elements)";
      return loose;
    }
  }
  if (!r.ok) r.message += "; tolerance " + describe(base, y, basis);
  return r;
}

}  // namespace rnx::runner
