// The floating-point yardstick of every correctness check (the runner's per-configuration check and rnx verify):
// a dtype's base tolerance widened by what the eager computation itself loses in that dtype against float64.
//
//   auto ref64 = k->reference(inputs, seed);                                   // the kernel in float64
//   auto eager = k->prepare("eager", inputs, at::kFloat, dev, seed)->outputs(); // the kernel in the dtype
//   auto moved = k->reference(rnx::runner::rounding_perturbed(inputs, rnx::runner::arithmetic_eps(at::kFloat, dev),
//                                                             seed), seed);
//   auto y = rnx::runner::measure_yardstick(eager, ref64, at::kFloat, &moved);
//   auto r = rnx::runner::check_within(out, ref64, rnx::default_tolerance("float32"), y,
//                                      rnx::runner::yard_basis::self_check);
//   // r.ok; r.message names the tolerance applied and the yardstick that set it
//
// The rule: |out - ref64| <= max(atol, 4 * yard) + rtol * |ref64| elementwise, NaN never equal, where (rtol, atol)
// is the base (torch.testing's per-dtype default, or the manifest's `tolerance` override) and `yard` is
//   trusted_reference  the eager output's largest error against float64: rnx verify, whose eager reference is a
//                      separate, trusted program; an honest rewrite rounds differently, by as much again.
//   self_check         the runner, whose eager output is itself under check: only the error rounding explains
//                      counts, the eager output's 99th-percentile error (one wrong element does not set it), at
//                      most 256x what rounding the inputs to the dtype alone moves the float64 output (a
//                      computation done at a lower precision than the dtype does not set it).
// Both grow with the reduction length of the computation (a 4096-long dot product, a 32768-long scan), because
// they are measured on it, not assumed.
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/runner/kernel.hpp"

#include <ATen/ATen.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::runner {

// The base tolerance is widened to this many times the yardstick.
inline constexpr double yard_factor = 4;
// self_check: the eager error counts up to this many times the input-rounding error (the verifier's precision
// audit uses the same limit for a candidate's error against the reference's).
inline constexpr double rounding_explains = 256;

// What the eager computation in one dtype loses against float64 on one input set, over the elements where both
// are finite (NaN and infinity are judged by the comparison itself, never widen it).
struct yardstick {
  at::ScalarType dtype = at::kFloat;
  double largest = 0;  // max |eager - ref64|
  double typical = 0;  // 99th percentile of |eager - ref64|, lower rank: with two or more elements the largest alone
                       // never sets it
  std::optional<double> input_rounding;  // max |ref64(inputs perturbed by the arithmetic's eps) - ref64|
  bool tf32 = false;                     // input_rounding was measured at TF32's step (arithmetic_eps)
  std::int64_t elements = 0;
};

enum class yard_basis { trusted_reference, self_check };
std::string_view to_string(yard_basis basis);

// The relative rounding step of `dtype`'s arithmetic on `device` under torch's settings at the time of the call:
// the dtype's eps, except float32 on CUDA where TF32 is allowed (torch.backends.cudnn.allow_tf32, on by default,
// so every float32 convolution; torch.backends.cuda.matmul.allow_tf32 / set_float32_matmul_precision("high")):
// those products are rounded to TF32's 10-bit mantissa, 2^-10. An untouched float32 convolution on an H200 is
// 3e-4 off float64, which float32's own eps could never explain.
double arithmetic_eps(at::ScalarType dtype, at::Device device);
bool tf32_allowed(at::ScalarType dtype, at::Device device);

// The operator families that may round their products to TF32, as dispatched while `call` runs (recorded by
// operator name through ATen's RecordFunction: aten::convolution and friends, aten::mm, addmm, bmm, baddbmm, ...).
struct tf32_families {
  bool convolution = false;  // TF32 where torch.backends.cudnn.allow_tf32 (on by default)
  bool matmul = false;       // TF32 where torch.backends.cuda.matmul.allow_tf32 / float32 matmul precision "high"
};
tf32_families families_during(const std::function<void()>& call);

// Whether a computation that dispatched `used` may have been rounded to TF32 in `dtype` on `device` under torch's
// settings now: a softmax never is, whatever the settings; a float32 convolution on CUDA is by default.
bool tf32_reaches(const tf32_families& used, at::ScalarType dtype, at::Device device);

// Inputs in float64, each floating element moved by a relative amount uniform in (-eps, eps): what rounding to the
// arithmetic's precision (arithmetic_eps) could have done to them. Deterministic in `seed`; non-floating inputs
// are returned as is.
std::vector<at::Tensor> rounding_perturbed(const std::vector<at::Tensor>& inputs, double eps, std::uint64_t seed);

// `perturbed_ref64`: the float64 computation on rounding_perturbed(inputs); needed by self_check, and by
// trusted_reference where TF32 is allowed (`tf32`).
yardstick measure_yardstick(const std::vector<at::Tensor>& eager, const std::vector<at::Tensor>& ref64,
                            at::ScalarType dtype, const std::vector<at::Tensor>* perturbed_ref64 = nullptr,
                            bool tf32 = false);

// The error the yardstick grants under `basis` (before yard_factor): trusted_reference, the reference's largest
// error, or where TF32 is allowed (y.tf32) the larger of that and the TF32 input-rounding error; self_check, the
// 99th-percentile error capped at rounding_explains times the input-rounding error.
double yard_value(const yardstick& y, yard_basis basis);

// rtol as given; atol = max(base.atol, yard_factor * yard_value).
tolerance widen(tolerance base, const yardstick& y, yard_basis basis);

// "rtol=1.3e-06, atol=0.00032 (float32's rtol=1.3e-06, atol=1e-05 widened to 4x the eager float32 computation's
// 99th-percentile error against float64, 8e-05)": what was applied and which yardstick set it.
std::string describe(tolerance base, const yardstick& y, yard_basis basis);

// self_check: a long reduction in a narrow dtype rounds a few elements much further than most (float16 causal
// attention on the H200, untouched: 96 of 8,388,608 elements beyond 4x the 99th-percentile error, the largest 3.4x
// beyond). In an output of at least 1 / tail_share elements, up to tail_share of them may exceed the tolerance as
// long as they stay within tail_factor times its atol; NaN, infinities and anything further never pass.
inline constexpr double tail_share = 1e-4;
inline constexpr double tail_factor = 16;

// compare_outputs under widen(base, y, basis) (with the tail allowance under self_check); the message (on a
// mismatch) names the yardstick.
check_result check_within(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& ref64, tolerance base,
                          const yardstick& y, yard_basis basis);

}  // namespace rnx::runner
