// One verification case: inputs made and placed, the candidate and the reference run on them, the outputs
// judged against the reference's own rounding error.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "rnx/runner/tolerance.hpp"

#include <algorithm>
#include <sstream>

namespace rnx::verify::detail {

std::vector<at::Tensor> verifier::candidate_call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                                 const shape_variant& shape) {
  // In the candidate's own process, which poisons its freed memory first and restores patched globals after.
  return candidate().call(inputs, dtype, shape);
}

std::vector<at::Tensor> verifier::make_base(const case_spec& c) {
  std::vector<at::Tensor> base = pair_.base_inputs(c.shape, c.seed);
  if (c.transform) {
    for (auto& t : base) {
      if (t.is_floating_point()) t = c.transform(t);
    }
  }
  return base;
}

// Whether the reference itself runs on this case: a shape its own module cannot be built at (a size its
// constructor refuses) is no case to blame a candidate for.
bool verifier::reference_accepts(const std::vector<at::Tensor>& base, const case_spec& c, at::ScalarType dtype) {
  std::vector<at::Tensor> narrow = place_all(base, dtype, pair_.device());
  try {
    pair_.reference().call(narrow, dtype, c.shape);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Whether case `c` lays its inputs out in a way the reference's own inputs (`base`, as get_inputs() or the manifest
// make them: always contiguous) never are: a refusal there, or wrong values, narrows the contract rather than breaks
// it.
bool verifier::foreign_layout(const case_spec& c, const std::vector<at::Tensor>& base) const {
  if (c.lay == layout::contiguous) return false;
  return std::all_of(base.begin(), base.end(), [](const at::Tensor& t) { return !t.defined() || t.is_contiguous(); });
}

std::string verifier::after_failed_call(const case_spec& c) {
  const std::string ended = slot_.restart_if_ended(c.label);
  return ended.empty() ? "" : " [its process ended there and was restarted for the checks after it]";
}

namespace {

// What a candidate that is wrong only on a layout the reference's own inputs never have should do about it.
std::string layout_fix(layout l) {
  return l == layout::transposed ? "call .contiguous() on its inputs, or check their strides and raise"
                                 : "call .contiguous() on its inputs, or assert that they are contiguous";
}

// A reduction's terms per output, at or above which the accumulation allowance applies: below it a kernel is
// elementwise or nearly so, and the eager reference's own error is the yardstick.
constexpr std::int64_t accumulation_min_terms = 16;
// The allowance in units of the dtype's unit roundoff times the sum of the terms' magnitudes (docs/verify.md,
// "Reductions": about four standard deviations of the rounding error of one sequential chain of N terms).
constexpr double accumulation_factor = 2.0;

}  // namespace

double verifier::accumulation_allowance(const std::vector<at::Tensor>& wide, const std::vector<at::Tensor>& ref64,
                                        at::ScalarType dtype, const shape_variant& shape, std::int64_t& terms) {
  terms = 0;
  std::int64_t largest_in = 0, smallest_out = 0;
  for (const auto& w : wide) {
    if (w.defined() && w.is_floating_point()) largest_in = std::max<std::int64_t>(largest_in, w.numel());
  }
  for (const auto& r : ref64) {
    if (r.defined() && r.is_floating_point() && r.numel() > 0) {
      smallest_out = smallest_out ? std::min<std::int64_t>(smallest_out, r.numel()) : r.numel();
    }
  }
  if (!largest_in || !smallest_out) return 0;
  terms = largest_in / smallest_out;
  if (terms < accumulation_min_terms) return 0;
  // The sum of the terms' magnitudes: the reference on |inputs| in float64 (for a sum, sum |x_i|; for a product
  // summed, sum |a_i||b_i|).
  std::vector<at::Tensor> magnitudes;
  magnitudes.reserve(wide.size());
  for (const auto& w : wide) magnitudes.push_back(w.defined() && w.is_floating_point() ? w.abs() : w);
  std::vector<at::Tensor> m;
  try {
    m = pair_.reference().call(magnitudes, at::kDouble, shape);
  } catch (const std::exception&) {
    return 0;
  }
  if (!all_finite(m)) return 0;
  return accumulation_factor * dtype_eps(dtype) / 2 * max_abs(m);
}

std::pair<tolerance, std::string> verifier::tolerance_for(const std::vector<at::Tensor>& wide,
                                                          const std::vector<at::Tensor>& ref64, at::ScalarType dtype,
                                                          const shape_variant& shape) {
  tolerance t = tol_for(dtype);
  std::int64_t terms = 0;
  const double allowance = accumulation_allowance(wide, ref64, dtype, shape, terms);
  if (allowance <= t.atol) return {t, ""};
  t.atol = allowance;
  return {t, "; atol includes the accumulation allowance of a " + std::to_string(terms) + "-term reduction in " +
                 std::string(runner::dtype_name(dtype)) + ", " + fmt(accumulation_factor) +
                 " x unit roundoff x the sum of the terms' magnitudes = " + fmt(allowance)};
}

namespace {

// The first output whose shape, dtype or device differs from the reference's in this dtype, and how ("" when
// every output has the reference's form).
std::pair<std::size_t, std::string> form_problem(const std::vector<at::Tensor>& out,
                                                 const std::vector<at::Tensor>& expected) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    const at::Tensor& o = out[i];
    const at::Tensor& e = expected[i];
    if (!o.defined()) return {i, "is undefined"};
    if (o.sizes() != e.sizes()) {
      std::ostringstream os;
      os << "has shape " << o.sizes() << ", expected " << e.sizes();
      return {i, os.str()};
    }
    if (o.scalar_type() != e.scalar_type()) {
      return {i, std::string("has dtype ") + std::string(c10::toString(o.scalar_type())) + ", expected " +
                     c10::toString(e.scalar_type())};
    }
    if (o.device() != e.device()) return {i, "is on " + o.device().str() + ", expected " + e.device().str()};
  }
  return {0, ""};
}

}  // namespace

void verifier::note_side_effects(const case_spec& c, const std::vector<at::Tensor>& inputs,
                                 const std::vector<at::Tensor>& before) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!at::equal(inputs[i], before[i])) {
      if (mutations_.size() < 4) {
        mutations_.push_back(c.label + ": input " + std::to_string(i) + " was modified by the candidate");
      }
    }
  }
  for (const auto& [o, i] : candidate().last_notes().shares_input) {
    if (aliasing_.size() < 4) {
      aliasing_.push_back(c.label + ": output " + std::to_string(o) + " shares memory with input " + std::to_string(i));
    }
  }
}

case_result verifier::evaluate(const case_spec& c, at::ScalarType dtype) {
  case_result r;
  std::vector<at::Tensor> base;
  try {
    base = make_base(c);
  } catch (const std::exception& e) {
    r.status = case_result::state::not_applicable;
    r.message = c.label + ": inputs cannot be made (" + e.what() + ")";
    return r;
  }
  const at::Device dev = pair_.device();
  std::vector<at::Tensor> inputs, before;
  for (const auto& b : base) {
    inputs.push_back(place(b, dtype, dev, c.lay));
    before.push_back(inputs.back().clone());
  }
  // The candidate runs first, on inputs no reference has seen: nothing it could reuse exists yet.
  try {
    r.out = candidate_call(inputs, dtype, c.shape);
  } catch (const std::exception& e) {
    const std::string restarted = after_failed_call(c);
    r.message = c.label + ": " + e.what() + restarted;
    r.status = reference_accepts(base, c, dtype) ? case_result::state::fail : case_result::state::not_applicable;
    if (r.status == case_result::state::not_applicable) {
      r.message += " (the reference rejects this case too)";
    } else if (foreign_layout(c, base)) {
      r.status = case_result::state::narrowed;
      r.message = (restarted.empty() ? "refuses " : "crashes on ") + c.label +
                  ", a layout the reference's own inputs never have (" + layout_fix(c.lay) + "): " + e.what() +
                  restarted;
    }
    return r;
  }
  synchronize_device(dev);
  note_side_effects(c, inputs, before);
  // The reference sees pristine values rounded to the candidate's dtype, in float64 and in that dtype.
  std::vector<at::Tensor> wide, narrow;
  for (const auto& b : base) {
    wide.push_back(b.is_floating_point() ? b.to(dtype).to(dev, at::kDouble) : b.to(dev));
    narrow.push_back(place(b, dtype, dev, layout::contiguous));
  }
  std::vector<at::Tensor> refdt;
  try {
    r.ref64 = pair_.reference().call(wide, at::kDouble, c.shape);
    refdt = pair_.reference().call(narrow, dtype, c.shape);
  } catch (const std::exception& e) {
    r.status = case_result::state::not_applicable;
    r.message = c.label + ": the reference rejects it (" + std::string(e.what()).substr(0, 160) + ")";
    return r;
  }
  if (!all_finite(r.ref64) || !all_finite(refdt)) {
    r.status = case_result::state::not_applicable;
    r.message = c.label + ": the reference itself is not finite here in " +
                std::string(all_finite(r.ref64) ? runner::dtype_name(dtype) : "float64");
    return r;
  }
  r.ref_max = max_abs(r.ref64);
  runner::yardstick yard = reference_yard(refdt, r.ref64, wide, dtype, c.shape);
  try {
    yard.largest = std::max(yard.largest, rounding_spread(c, r.ref64, wide, dtype));
  } catch (const std::exception& e) {
    r.status = case_result::state::not_applicable;
    r.message = c.label + ": the reference rejects its inputs moved by one rounding step (" +
                std::string(e.what()).substr(0, 160) + ")";
    return r;
  }
  r.yard = yard.largest;
  // Output form first: count, shape, dtype and device must be what the reference gives in this dtype.
  if (r.out.size() != refdt.size()) {
    r.status = case_result::state::fail;
    r.message = c.label + ": " + std::to_string(r.out.size()) + " output(s), the reference returns " +
                std::to_string(refdt.size());
    return r;
  }
  if (auto [i, problem] = form_problem(r.out, refdt); !problem.empty()) {
    r.status = case_result::state::fail;
    r.message = c.label + ": output " + std::to_string(i) + " " + problem;
    if (foreign_layout(c, base)) {
      r.status = case_result::state::narrowed;
      r.message = "returns a wrong form for " + c.label + ", a layout the reference's own inputs never have (" +
                  layout_fix(c.lay) + "): output " + std::to_string(i) + " " + problem;
    }
    return r;
  }
  const auto [tol, allowance] = tolerance_for(wide, r.ref64, dtype, c.shape);
  r.allowance = tol.atol > tol_for(dtype).atol ? tol.atol : 0;
  runner::check_result check = runner::check_within(r.out, r.ref64, tol, yard, runner::yard_basis::trusted_reference);
  r.err = check.max_abs_err;
  if (!check.ok) {
    r.status = case_result::state::fail;
    r.message = c.label + ": " + check.message + allowance;
    if (foreign_layout(c, base)) {
      r.status = case_result::state::narrowed;
      r.message = "returns wrong values for " + c.label + ", a layout the reference's own inputs never have (" +
                  layout_fix(c.lay) + "): " + check.message;
    }
  }
  return r;
}

// The reference's largest error in the dtype over c.rounding_draws copies of the inputs, each floating element moved
// by up to the dtype's rounding step (0 when the case asks for none).
double verifier::rounding_spread(const case_spec& c, const std::vector<at::Tensor>& ref64,
                                 const std::vector<at::Tensor>& wide, at::ScalarType dtype) {
  double largest = 0;
  const at::Device dev = pair_.device();
  for (int draw = 0; draw < c.rounding_draws; ++draw) {
    std::vector<at::Tensor> moved;
    for (const auto& t : runner::rounding_perturbed(wide, runner::arithmetic_eps(dtype, dev), c.seed + 1 + draw)) {
      moved.push_back(t.is_floating_point() ? t.to(dtype).contiguous() : t);
    }
    const std::vector<at::Tensor> got = pair_.reference().call(moved, dtype, c.shape);
    if (!all_finite(got)) continue;  // a draw the dtype cannot represent sets nothing
    largest = std::max(largest, runner::measure_yardstick(got, ref64, dtype).largest);
  }
  return largest;
}

runner::yardstick verifier::reference_yard(const std::vector<at::Tensor>& refdt, const std::vector<at::Tensor>& ref64,
                                           const std::vector<at::Tensor>& wide, at::ScalarType dtype,
                                           const shape_variant& shape) {
  if (!runner::tf32_allowed(dtype, pair_.device())) return runner::measure_yardstick(refdt, ref64, dtype);
  constexpr std::uint64_t perturbation_seed = 0x7F32;
  std::vector<at::Tensor> moved;
  // Only a reference made of convolutions or matrix products (where torch allows TF32 for them) is granted TF32's
  // rounding: a softmax is exact float32 arithmetic whatever the settings, and so must its candidate be.
  const runner::tf32_families used = runner::families_during([&] {
    moved = pair_.reference().call(
        runner::rounding_perturbed(wide, runner::arithmetic_eps(dtype, pair_.device()), perturbation_seed), at::kDouble,
        shape);
  });
  if (!runner::tf32_reaches(used, dtype, pair_.device())) return runner::measure_yardstick(refdt, ref64, dtype);
  return runner::measure_yardstick(refdt, ref64, dtype, &moved, true);
}

}  // namespace rnx::verify::detail
