// The verifier inside rnx-verify-worker: every correctness stage and audit check on one candidate, a JSON row each.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/tolerance.hpp"
#include "rnx/runner/worker_channel.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/util/Exception.h>

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace bj = boost::json;

namespace rnx::verify::detail {

using runner::py_ref;

namespace {

// ---- tensors ----

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

bool all_finite(const std::vector<at::Tensor>& ts) {
  for (const auto& t : ts) {
    if (t.is_floating_point() && !at::isfinite(t).all().item<bool>()) return false;
  }
  return true;
}

// Largest |a - b| over elements where b is finite; infinity where a is not finite but b is.
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

}  // namespace

std::vector<at::Tensor> verifier::candidate_call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                                 const shape_variant& shape) {
  // In the candidate's own process, which poisons its freed memory first and restores patched globals after.
  return candidate_.call(inputs, dtype, shape);
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
  std::vector<at::Tensor> narrow;
  for (const auto& b : base) narrow.push_back(place(b, dtype, pair_.device(), layout::contiguous));
  try {
    pair_.reference().call(narrow, dtype, c.shape);
    return true;
  } catch (const std::exception&) {
    return false;
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
    r.message = c.label + ": " + e.what();
    r.status = reference_accepts(base, c, dtype) ? case_result::state::fail : case_result::state::not_applicable;
    if (r.status == case_result::state::not_applicable) r.message += " (the reference rejects this case too)";
    return r;
  }
  synchronize_device(dev);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!at::equal(inputs[i], before[i])) {
      if (mutations_.size() < 4) {
        mutations_.push_back(c.label + ": input " + std::to_string(i) + " was modified by the candidate");
      }
    }
  }
  for (const auto& [o, i] : candidate_.last_notes().shares_input) {
    if (aliasing_.size() < 4) {
      aliasing_.push_back(c.label + ": output " + std::to_string(o) + " shares memory with input " + std::to_string(i));
    }
  }
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
  const runner::yardstick yard = reference_yard(refdt, r.ref64, wide, dtype, c.shape);
  r.yard = yard.largest;
  // Output form first: count, shape, dtype and device must be what the reference gives in this dtype.
  if (r.out.size() != refdt.size()) {
    r.status = case_result::state::fail;
    r.message = c.label + ": " + std::to_string(r.out.size()) + " output(s), the reference returns " +
                std::to_string(refdt.size());
    return r;
  }
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    const at::Tensor& o = r.out[i];
    const at::Tensor& e = refdt[i];
    std::string problem;
    if (!o.defined()) {
      problem = "is undefined";
    } else if (o.sizes() != e.sizes()) {
      std::ostringstream os;
      os << "has shape " << o.sizes() << ", expected " << e.sizes();
      problem = os.str();
    } else if (o.scalar_type() != e.scalar_type()) {
      problem = std::string("has dtype ") + std::string(c10::toString(o.scalar_type())) + ", expected " +
                c10::toString(e.scalar_type());
    } else if (o.device() != e.device()) {
      problem = "is on " + o.device().str() + ", expected " + e.device().str();
    }
    if (!problem.empty()) {
      r.status = case_result::state::fail;
      r.message = c.label + ": output " + std::to_string(i) + " " + problem;
      return r;
    }
  }
  runner::check_result check =
      runner::check_within(r.out, r.ref64, tol_for(dtype), yard, runner::yard_basis::trusted_reference);
  r.err = check.max_abs_err;
  if (!check.ok) {
    r.status = case_result::state::fail;
    r.message = c.label + ": " + check.message;
  }
  return r;
}

void verifier::row(check_group group, const std::string& name, const char* result, const std::string& detail,
                   double started, at::ScalarType dtype) {
  emit(bj::object{{"event", "check"},
                  {"group", to_string(group)},
                  {"name", name},
                  {"result", result},
                  {"detail", detail},
                  {"dtype", std::string(runner::dtype_name(dtype))},
                  {"seconds", now_s() - started}});
}

// Runs a list of cases as one row: fail on any failure, pass when at least one applied, skip otherwise.
struct stage_tally {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  std::vector<std::string> failures;
  std::vector<std::string> skips;
  void add(const case_result& r) {
    if (r.status == case_result::state::pass) ++passed;
    if (r.status == case_result::state::fail) {
      ++failed;
      if (failures.size() < 3) failures.push_back(r.message);
    }
    if (r.status == case_result::state::not_applicable) {
      ++skipped;
      if (skips.size() < 2) skips.push_back(r.message);
    }
  }
  const char* result() const { return failed ? "fail" : (passed ? "pass" : "skip"); }
  std::string detail() const {
    std::string d = std::to_string(passed) + " passed, " + std::to_string(failed) + " failed" +
                    (skipped ? ", " + std::to_string(skipped) + " not applicable" : "");
    for (const auto& f : failures) d += "; " + f;
    if (!failed) {
      for (const auto& s : skips) d += "; " + s;
    }
    return d;
  }
};

verifier::dtype_run verifier::start_dtype(at::ScalarType dtype) const {
  dtype_run run;
  run.dtype = dtype;
  run.base_seed = job_.seed;
  run.declared = job_.batches.empty() ? std::vector<std::int64_t>{1} : job_.batches;
  run.batched = pair_.has_batch();
  if (!run.batched) run.declared = {1};
  run.smoke_shape = shape_variant{run.declared.front(), {}};
  // Up to four non-batch sizes, largest first: the shape sweep and the edge cases vary them.
  const std::map<std::string, std::int64_t> variable = pair_.variable_dims();
  run.dims.assign(variable.begin(), variable.end());
  std::sort(run.dims.begin(), run.dims.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (run.dims.size() > 4) run.dims.resize(4);
  return run;
}

// Every stage of one dtype, in report order; each draws its seeds from the run in turn.
const std::vector<void (verifier::*)(verifier::dtype_run&)>& verifier::stages() {
  static const std::vector<void (verifier::*)(dtype_run&)> list = {
      &verifier::stage_smoke,        &verifier::stage_shape_sweep,         &verifier::stage_stability,
      &verifier::stage_determinism,  &verifier::stage_edge_cases,          &verifier::stage_fresh_inputs,
      &verifier::stage_stale_memory, &verifier::stage_ignored_inputs,      &verifier::stage_precision,
      &verifier::stage_hidden_work,  &verifier::stage_implausible_speedup,
  };
  return list;
}

void verifier::run_dtype(at::ScalarType dtype) {
  dtype_run run = start_dtype(dtype);
  for (auto stage : stages()) (this->*stage)(run);
}

// Smoke: one input set at the first declared batch; a reference that cannot run its own inputs is bad input.
void verifier::stage_smoke(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  case_result smoke = evaluate({"smoke (" + smoke_shape.label() + ")", smoke_shape, next_seed(), {}, {}}, dtype);
  if (smoke.status == case_result::state::not_applicable) {
    throw error(errc::invalid, "the reference cannot run its own declared inputs: " + smoke.message);
  }
  row(check_group::correctness, "smoke", smoke.status == case_result::state::pass ? "pass" : "fail",
      smoke.status == case_result::state::pass
          ? "max abs err " + fmt(smoke.err) + " (reference's own " + fmt(smoke.yard) + ")"
          : smoke.message,
      t, dtype);
}

// Shape sweep: declared batches, unseen ones, and other sizes varied where the reference accepts them.
void verifier::stage_shape_sweep(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const std::vector<std::int64_t>& declared = run.declared;
  const bool batched = run.batched;
  const std::vector<std::pair<std::string, std::int64_t>>& dims = run.dims;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  stage_tally declared_tally, unseen_tally;
  std::set<std::int64_t> batches(declared.begin(), declared.end());
  std::vector<shape_variant> unseen;
  if (batched) {
    const std::int64_t largest = *std::max_element(declared.begin(), declared.end());
    for (std::int64_t b : {std::int64_t{1}, std::int64_t{7}, std::int64_t{12}, 2 * largest + 1}) {
      if (!batches.count(b)) unseen.push_back({b, {}});
    }
  }
  for (const auto& [name, size] : dims) {
    if (size > 3) unseen.push_back({declared.front(), {{name, prev_prime(size)}}});
  }
  for (std::int64_t b : declared) {
    declared_tally.add(evaluate({"declared " + shape_variant{b, {}}.label(), {b, {}}, next_seed(), {}, {}}, dtype));
  }
  for (const auto& v : unseen) unseen_tally.add(evaluate({"unseen " + v.label(), v, next_seed(), {}, {}}, dtype));
  stage_tally sweep = declared_tally;
  sweep.passed += unseen_tally.passed;
  sweep.failed += unseen_tally.failed;
  sweep.skipped += unseen_tally.skipped;
  for (const auto& f : unseen_tally.failures) {
    if (sweep.failures.size() < 3) sweep.failures.push_back(f);
  }
  for (const auto& f : unseen_tally.skips) {
    if (sweep.skips.size() < 3) sweep.skips.push_back(f);
  }
  row(check_group::correctness, "shape_sweep", sweep.result(), sweep.detail(), t, dtype);
  // Special-casing: right on the measured shapes, wrong on shapes nobody measured.
  {
    std::string d;
    const char* result = "pass";
    if (unseen_tally.failed) {
      result = "fail";
      d = (declared_tally.failed ? "wrong on declared shapes too; "
                                 : "right on every declared shape but wrong on " + std::to_string(unseen_tally.failed) +
                                       " unseen one(s): ") +
          unseen_tally.failures.front();
    } else if (unseen_tally.passed == 0) {
      result = "skip";
      d = "no unseen shape could be run" + (unseen_tally.skips.empty() ? "" : ": " + unseen_tally.skips.front());
    } else {
      d = std::to_string(unseen_tally.passed) + " unseen shape(s) agree with the reference";
    }
    row(check_group::audit, "shape_specialization", result, d, t, dtype);
  }
}

// Adversarial stability: scaled, shifted, negative and mixed-magnitude inputs.
void verifier::stage_stability(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  stage_tally stability;
  struct scaled {
    const char* label;
    std::function<at::Tensor(const at::Tensor&)> f;
  };
  std::uint64_t spread_seed = next_seed();
  std::vector<scaled> transforms = {
      {"scaled by 1e-3", [](const at::Tensor& x) { return x * 1e-3; }},
      {"scaled by 1e3", [](const at::Tensor& x) { return x * 1e3; }},
      {"shifted by +100 (overflows a naive exp)", [](const at::Tensor& x) { return x + 100.0; }},
      {"all negative (-10|x|)", [](const at::Tensor& x) { return x.abs() * -10.0; }},
      {"mixed signs and magnitudes (x * 10^U(-3,3))",
       [spread_seed](const at::Tensor& x) {
         at::Generator g = at::make_generator<at::CPUGeneratorImpl>(spread_seed);
         return x * at::pow(10.0, at::rand(x.sizes(), g, at::TensorOptions().dtype(x.scalar_type())) * 6 - 3);
       }},
  };
  for (const auto& tr : transforms) {
    stability.add(evaluate({std::string("inputs ") + tr.label, smoke_shape, next_seed(), tr.f, {}}, dtype));
  }
  row(check_group::correctness, "stability", stability.result(), stability.detail(), t, dtype);
}

// Determinism: identical inputs twice.
void verifier::stage_determinism(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    std::vector<at::Tensor> base = make_base({"", smoke_shape, next_seed(), {}, {}});
    std::vector<at::Tensor> a_in, b_in;
    for (const auto& b : base) {
      a_in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
      b_in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
    }
    try {
      std::vector<at::Tensor> first = candidate_call(a_in, dtype, smoke_shape);
      std::vector<at::Tensor> first_copy;
      for (const auto& o : first) first_copy.push_back(o.clone());
      std::vector<at::Tensor> second = candidate_call(b_in, dtype, smoke_shape);
      synchronize_device(pair_.device());
      for (int i : candidate_.last_notes().reuses_previous) {
        if (aliasing_.size() < 4) {
          aliasing_.push_back("output " + std::to_string(i) +
                              " of a second call reuses the first call's memory "
                              "(the next call overwrites a result already handed out)");
        }
      }
      runner::check_result again = runner::compare_outputs(second, first_copy, tol_for(dtype));
      bool bitwise = again.ok && again.max_abs_err == 0;
      row(check_group::correctness, "determinism", again.ok ? "pass" : "fail",
          again.ok ? (bitwise ? "bitwise identical"
                              : "within tolerance, not bitwise identical (max diff " + fmt(again.max_abs_err) + ")")
                   : "two calls on identical inputs disagree: " + again.message,
          t, dtype);
    } catch (const std::exception& e) {
      row(check_group::correctness, "determinism", "fail", e.what(), t, dtype);
    }
  }
}

// Edge cases: non-contiguous and transposed layouts, batch 1 with odd sizes, all-zero inputs.
void verifier::stage_edge_cases(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  const std::vector<std::pair<std::string, std::int64_t>>& dims = run.dims;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  stage_tally edges;
  edges.add(
      evaluate({"non-contiguous inputs (every other element)", smoke_shape, next_seed(), {}, layout::strided}, dtype));
  edges.add(evaluate({"transposed memory layout", smoke_shape, next_seed(), {}, layout::transposed}, dtype));
  {
    shape_variant odd{1, {}};
    for (const auto& [name, size] : dims) {
      if (size > 3) odd.dims[name] = prev_prime(size);
    }
    edges.add(evaluate({"batch 1 with odd sizes (" + odd.label() + ")", odd, next_seed(), {}, {}}, dtype));
  }
  edges.add(
      evaluate({"all-zero inputs", smoke_shape, next_seed(), [](const at::Tensor& x) { return x * 0.0; }, {}}, dtype));
  row(check_group::correctness, "edge_cases", edges.result(), edges.detail(), t, dtype);
}

// Fresh inputs: a second set of values must give the second set's answer.
void verifier::stage_fresh_inputs(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    shape_variant sh = smoke_shape;
    std::vector<at::Tensor> a_base = make_base({"", sh, next_seed(), {}, {}});
    std::vector<at::Tensor> a_in;
    for (const auto& b : a_base) a_in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
    try {
      std::vector<at::Tensor> first = candidate_call(a_in, dtype, sh);
      std::vector<at::Tensor> first_copy;
      for (const auto& o : first) first_copy.push_back(o.clone());
      case_result second = evaluate({"second input set", sh, next_seed(), {}, {}}, dtype);
      std::string d;
      if (second.status == case_result::state::fail) {
        bool same = second.out.size() == first_copy.size();
        for (std::size_t i = 0; same && i < first_copy.size(); ++i) {
          same = second.out[i].sizes() == first_copy[i].sizes() &&
                 at::equal(second.out[i].to(at::kCPU), first_copy[i].to(at::kCPU));
        }
        d = same ? "the output did not follow new inputs: the same result came back for different values "
                   "(a memorized result); " +
                       second.message
                 : second.message;
      } else {
        d = "a second set of values gives the second set's answer";
      }
      row(check_group::audit, "fresh_inputs", second.status == case_result::state::fail ? "fail" : "pass", d, t, dtype);
    } catch (const std::exception& e) {
      row(check_group::audit, "fresh_inputs", "fail", e.what(), t, dtype);
    }
  }
}

// Stale memory: the reference has just computed the answer in this dtype and freed it; the candidate runs
// next, on the same values. It cannot read that memory (another process), and its own freed memory is poisoned
// before every call (CUDA cache blocks 0xff-filled, glibc's MALLOC_PERTURB_ on the CPU).
void verifier::stage_stale_memory(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    case_spec c{"right after the reference freed its result", smoke_shape, next_seed(), {}, {}};
    std::vector<at::Tensor> base = make_base(c);
    std::vector<at::Tensor> narrow;
    for (const auto& b : base) narrow.push_back(place(b, dtype, pair_.device(), layout::contiguous));
    try {
      pair_.reference().call(narrow, dtype, c.shape);
    } catch (const std::exception&) {
      // evaluate() below reports a reference that cannot run.
    }
    narrow.clear();
    case_result r = evaluate(c, dtype);
    const std::string how = pair_.device().is_cuda()
                                ? "the reference's result is in another process; the candidate's freed CUDA cache "
                                  "is poisoned before every call"
                                : "the reference's result is in another process; the candidate's freed heap memory "
                                  "is 0xff-filled (MALLOC_PERTURB_)";
    row(check_group::audit, "stale_memory", r.status == case_result::state::fail ? "fail" : "pass",
        r.status == case_result::state::fail ? r.message + " [" + how + "]" : "correct; " + how, t, dtype);
  }
}

// Ignored inputs: where the reference's output moves with an input, the candidate's must move too.
void verifier::stage_ignored_inputs(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    std::vector<std::string> ignored, checked, irrelevant;
    std::vector<at::Tensor> base = make_base({"", smoke_shape, next_seed(), {}, {}});
    std::vector<at::Tensor> other = make_base({"", smoke_shape, next_seed(), {}, {}});
    std::string failure;
    try {
      std::vector<at::Tensor> base_in;
      for (const auto& b : base) base_in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
      std::vector<at::Tensor> cand_base = candidate_call(base_in, dtype, smoke_shape);
      std::vector<at::Tensor> cand_base_copy;
      for (const auto& o : cand_base) cand_base_copy.push_back(o.detach().to(at::kCPU).clone());
      std::vector<at::Tensor> wide_base;
      for (const auto& b : base) {
        wide_base.push_back(b.is_floating_point() ? b.to(dtype).to(pair_.device(), at::kDouble) : b.to(pair_.device()));
      }
      std::vector<at::Tensor> ref_base = pair_.reference().call(wide_base, at::kDouble, smoke_shape);
      for (std::size_t i = 0; i < base.size(); ++i) {
        if (!base[i].is_floating_point() || i >= other.size() || other[i].sizes() != base[i].sizes()) continue;
        std::vector<at::Tensor> changed = base;
        changed[i] = other[i];
        std::vector<at::Tensor> in, wide, narrow;
        for (const auto& b : changed) {
          in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
          narrow.push_back(place(b, dtype, pair_.device(), layout::contiguous));
          wide.push_back(b.is_floating_point() ? b.to(dtype).to(pair_.device(), at::kDouble) : b.to(pair_.device()));
        }
        std::vector<at::Tensor> ref_changed = pair_.reference().call(wide, at::kDouble, smoke_shape);
        const std::string name = i < job_.inputs.size() ? job_.inputs[i].name : "input " + std::to_string(i);
        if (runner::compare_outputs(ref_changed, ref_base, tol_for(dtype)).ok) {
          irrelevant.push_back(name);
          continue;
        }
        std::vector<at::Tensor> cand_changed = candidate_call(in, dtype, smoke_shape);
        synchronize_device(pair_.device());
        checked.push_back(name);
        // The same yardstick as every correctness stage: the reference's own error in this dtype on these inputs
        // (a fixed multiple of eps * max|ref| ignores the reduction length and rejected honest large-K GEMMs).
        const runner::yardstick yard =
            reference_yard(pair_.reference().call(narrow, dtype, smoke_shape), ref_changed, wide, dtype, smoke_shape);
        if (!runner::check_within(cand_changed, ref_changed, tol_for(dtype), yard,
                                  runner::yard_basis::trusted_reference)
                 .ok) {
          bool unchanged = runner::compare_outputs(cand_changed, cand_base_copy, tol_for(dtype)).ok;
          ignored.push_back(
              name + (unchanged ? " (the output did not change when it did)" : " (wrong output once it changed)"));
        }
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    std::string d;
    const char* result = "pass";
    if (!failure.empty()) {
      result = "fail";
      d = failure;
    } else if (!ignored.empty()) {
      result = "fail";
      d = "the reference depends on it but the candidate does not follow: ";
      for (std::size_t i = 0; i < ignored.size(); ++i) d += (i ? ", " : "") + ignored[i];
    } else if (checked.empty()) {
      result = "skip";
      d = "no input changes the reference's output";
    } else {
      d = "follows every input the reference depends on (" + std::to_string(checked.size()) + ")";
    }
    if (!irrelevant.empty()) {
      d += "; the reference ignores:";
      for (const auto& n : irrelevant) d += " " + n;
    }
    row(check_group::audit, "ignored_inputs", result, d, t, dtype);
  }
}

// Precision: on well-conditioned data, the candidate's error against float64 next to the eager reference's
// own rounding error in this dtype.
void verifier::stage_precision(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const std::vector<std::int64_t>& declared = run.declared;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    const std::int64_t largest = *std::max_element(declared.begin(), declared.end());
    case_result r = evaluate({"well-conditioned inputs", {largest, {}}, next_seed(), {}, {}}, dtype);
    if (r.status == case_result::state::not_applicable) {
      row(check_group::audit, "precision", "skip", r.message, t, dtype);
    } else if (r.out.empty() || r.ref64.empty()) {
      row(check_group::audit, "precision", "fail", r.message, t, dtype);
    } else {
      double cand_err = max_error(r.out, r.ref64);
      double floor = 4 * dtype_eps(dtype) * std::max(r.ref_max, 1e-30);
      double ratio = cand_err / std::max(r.yard, floor);
      constexpr double limit = 256;
      bool bad = !std::isfinite(ratio) || ratio > limit;
      row(check_group::audit, "precision", bad ? "fail" : "pass",
          "error " + fmt(cand_err) + " vs the eager " + std::string(runner::dtype_name(dtype)) + " reference's " +
              fmt(r.yard) + " (" + fmt(ratio) + "x; limit " + fmt(limit) + "x)" +
              (bad ? ": far above what this dtype itself loses, a lower-precision computation" : ""),
          t, dtype);
    }
  }
}

// Hidden work: CUDA streams other than the timed one.
void verifier::stage_hidden_work(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const std::vector<std::int64_t>& declared = run.declared;
  const bool batched = run.batched;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  if (!pair_.device().is_cuda()) {
    row(check_group::audit, "hidden_work", "skip",
        "CUDA only; on the CPU, work moved off the timed thread is caught by extra_threads", t, dtype);
  } else {
    const std::int64_t largest = 2 * *std::max_element(declared.begin(), declared.end()) + 1;
    shape_variant sh{batched ? largest : 1, {}};
    std::vector<at::Tensor> in;
    for (const auto& b : make_base({"", sh, next_seed(), {}, {}})) {
      in.push_back(place(b, dtype, pair_.device(), layout::contiguous));
    }
    constexpr int calls = 50;
    try {
      hidden_work_result h = candidate_.hidden_work(in, dtype, sh, calls);
      // Work after the timed stream's stop event, beyond the host's reaction time and a tenth of the timed work
      // (the held pass may have made fewer calls: the same share of the plain pass's time per call).
      const double held_work_ms = std::max(h.held_stream_ms - h.hold_ms, 0.0);
      const double plain_share_ms = h.timed_stream_ms * h.held_calls / calls;
      bool lingering = h.lingering_ms > 0.05 + 0.1 * h.timed_stream_ms ||
                       h.held_lingering_ms > 0.05 + 0.1 * std::max(held_work_ms, plain_share_ms);
      std::string d = std::to_string(calls) + " calls: current-stream events " + fmt(h.timed_stream_ms) +
                      " ms, host with device-wide sync " + fmt(h.host_ms) +
                      " ms, work still running after the timed stream finished " + fmt(h.lingering_ms) + " ms; " +
                      std::to_string(h.held_calls) + " calls behind a " + fmt(h.hold_ms) + " ms device-side hold " +
                      fmt(h.held_lingering_ms) + " ms" +
                      (h.hold_covered ? ""
                                      : " (the hold ended before the host finished launching, so that "
                                        "pass is not conclusive)");
      if (h.stream_changed) d = "the candidate left a different current stream behind; " + d;
      if (lingering) d = "work continues on other streams after the timed stream is done; " + d;
      row(check_group::audit, "hidden_work", (lingering || h.stream_changed) ? "fail" : "pass", d, t, dtype);
    } catch (const std::exception& e) {
      row(check_group::audit, "hidden_work", "fail", e.what(), t, dtype);
    }
  }
}

// Implausible speedup: the eager reference in this dtype against the candidate, on the largest declared batch.
void verifier::stage_implausible_speedup(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const std::vector<std::int64_t>& declared = run.declared;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    const std::int64_t largest = *std::max_element(declared.begin(), declared.end());
    timed_speedup(shape_variant{largest, {}}, dtype, next_seed, t);
  }
}

std::vector<at::Tensor> verifier::rewritten_twin(const std::vector<at::Tensor>& base, std::uint64_t seed) {
  // One element of every floating input takes another element's value: values the inputs could have had, changed
  // where a fingerprint that samples a few positions does not look.
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  std::vector<at::Tensor> twin;
  for (const auto& b : base) {
    at::Tensor t = b.clone();
    if (t.is_floating_point() && t.numel() >= 2) {
      at::Tensor flat = t.view({-1});
      const std::int64_t n = flat.numel();
      const std::int64_t at_pos = at::randint(n, {1}, gen).item<std::int64_t>();
      std::int64_t from = at::randint(n - 1, {1}, gen).item<std::int64_t>();
      if (from >= at_pos) ++from;
      flat[at_pos] = flat[from].item();
    }
    twin.push_back(t);
  }
  return twin;
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

std::string verifier::check_timed_output(const std::vector<at::Tensor>& out, const std::vector<at::Tensor>& base,
                                         at::ScalarType dtype, const shape_variant& shape) {
  std::vector<at::Tensor> wide, narrow;
  for (const auto& b : base) {
    wide.push_back(b.is_floating_point() ? b.to(dtype).to(pair_.device(), at::kDouble) : b.to(pair_.device()));
    narrow.push_back(place(b, dtype, pair_.device(), layout::contiguous));
  }
  const std::vector<at::Tensor> ref64 = pair_.reference().call(wide, at::kDouble, shape);
  const std::vector<at::Tensor> refdt = pair_.reference().call(narrow, dtype, shape);
  if (!all_finite(ref64) || !all_finite(refdt)) return "";  // not judged here, as in every stage
  const runner::yardstick yard = reference_yard(refdt, ref64, wide, dtype, shape);
  runner::check_result r =
      runner::check_within(out, ref64, tol_for(dtype), yard, runner::yard_basis::trusted_reference);
  return r.ok ? "" : r.message;
}

void verifier::timed_speedup(const shape_variant& sh, at::ScalarType dtype,
                             const std::function<std::uint64_t()>& next_seed, double started) {
  // Three rounds, each: a warm-up set and three timed sets for the reference here, the same values for the
  // candidate in its process; every timed call of the candidate gets values and memory no earlier call saw (drawn
  // before the clock starts), so a result cached on an input cannot be served. The fastest call counts (load on a
  // shared machine only adds time); the trusted reference is called three times back to back on each set, so a
  // thread pool woken late on a busy machine does not pass for a slow reference. Up to three more rounds run while
  // the speedup looks implausible: only one that stays so is. Then the candidate's timed outputs are checked: one
  // timed call per round chosen after it ran, and the call made after the first timed set's memory was rewritten
  // in place with new values.
  constexpr int rounds = 3;
  constexpr int extra_rounds = 3;
  constexpr int timed = 3;
  constexpr int reference_repeats = 3;
  std::mt19937_64 pick(std::random_device{}());
  double ref_ms = INFINITY, cand_ms = INFINITY;
  int checked = 0;
  int rounds_run = 0;
  std::string wrong;
  try {
    for (int round = 0; round < rounds + extra_rounds && wrong.empty(); ++round) {
      if (round >= rounds && ref_ms / std::max(cand_ms, 1e-6) <= job_.speedup_limit) break;
      ++rounds_run;
      std::vector<std::vector<at::Tensor>> bases;
      for (int k = 0; k <= timed; ++k) bases.push_back(make_base({"", sh, next_seed(), {}, {}}));
      bases.push_back(rewritten_twin(bases[1], next_seed()));
      std::vector<std::vector<at::Tensor>> for_reference, for_candidate;
      for (const auto& set : bases) {
        std::vector<at::Tensor> r, c;
        for (const auto& b : set) {
          r.push_back(place(b, dtype, pair_.device(), layout::contiguous));
          c.push_back(place(b, dtype, pair_.device(), layout::contiguous));
        }
        for_reference.push_back(std::move(r));
        for_candidate.push_back(std::move(c));
      }
      pair_.reference().call(for_reference[0], dtype, sh);
      for (int k = 1; k <= timed; ++k) {
        const std::vector<at::Tensor>& in = for_reference[static_cast<std::size_t>(k)];
        for (int r = 0; r < reference_repeats; ++r) {
          ref_ms = std::min(ref_ms, time_call_ms([&] { pair_.reference().call(in, dtype, sh); }, pair_.device()));
        }
      }
      for_reference.clear();
      const remote_candidate::fresh_timing f = candidate_.time_fresh(for_candidate, dtype, sh);
      cand_ms = std::min(cand_ms, f.fastest_ms);
      const std::size_t chosen = std::uniform_int_distribution<std::size_t>(0, timed - 1)(pick);
      std::string bad = check_timed_output(f.outputs[chosen], bases[chosen + 1], dtype, sh);
      ++checked;
      if (!bad.empty()) {
        wrong = "timed call " + std::to_string(round * timed + chosen + 1) + " returned a wrong result: " + bad;
        break;
      }
      bad = check_timed_output(f.outputs.back(), bases.back(), dtype, sh);
      ++checked;
      if (!bad.empty()) {
        wrong =
            "after new values were written into an input's memory (an address it had seen), the output did not "
            "follow (a result cached on the input's address?): " +
            bad;
      }
    }
  } catch (const std::exception& e) {
    row(check_group::audit, "implausible_speedup", "fail", e.what(), started, dtype);
    return;
  }
  if (!wrong.empty()) {
    row(check_group::audit, "implausible_speedup", "fail", wrong, started, dtype);
    return;
  }
  const double speedup = ref_ms / std::max(cand_ms, 1e-6);
  const bool implausible = speedup > job_.speedup_limit;
  emit(bj::object{{"event", "speedup"}, {"dtype", std::string(runner::dtype_name(dtype))}, {"value", speedup}});
  std::string d = fmt(speedup) + "x vs the eager reference (" + fmt(ref_ms) + " ms -> " + fmt(cand_ms) + " ms, " +
                  sh.label() + "; " + std::to_string(rounds_run * timed) + " timed calls, each on new inputs, " +
                  std::to_string(checked) + " outputs checked)";
  const char* result = "pass";
  if (implausible && job_.speedup_review) {
    result = "review";
    d += "; over " + fmt(job_.speedup_limit) + "x: have a person look";
  } else if (implausible) {
    result = "fail";
    d += "; over " + fmt(job_.speedup_limit) + "x, rejected (--speedup-review marks it for a person instead)";
  }
  row(check_group::audit, "implausible_speedup", result, d, started, dtype);
}

void verifier::run_all() {
  for (const auto& name : job_.dtypes) {
    at::ScalarType dtype = runner::parse_dtype(name);
    try {
      run_dtype(dtype);
    } catch (const error& e) {
      if (e.code() == errc::invalid || e.code() == errc::usage) throw;
      emit(bj::object{{"event", "check"},
                      {"group", to_string(check_group::correctness)},
                      {"name", "smoke"},
                      {"result", "fail"},
                      {"detail", e.what()},
                      {"dtype", name},
                      {"seconds", 0}});
    }
  }
  const double t = now_s();
  emit(bj::object{
      {"event", "check"},
      {"group", to_string(check_group::audit)},
      {"name", "input_mutation"},
      {"result", mutations_.empty() ? "pass" : "fail"},
      {"detail", mutations_.empty() ? "inputs compared bitwise before and after every call"
                                    : mutations_.front() + " (" + std::to_string(mutations_.size()) + " case(s))"},
      {"seconds", now_s() - t}});
  emit(bj::object{
      {"event", "check"},
      {"group", to_string(check_group::audit)},
      {"name", "output_aliasing"},
      {"result", aliasing_.empty() ? "pass" : "fail"},
      {"detail", aliasing_.empty() ? "no output shares memory with an input or an earlier result" : aliasing_.front()},
      {"seconds", now_s() - t}});
  const std::vector<std::string>& changed = candidate_.patched();
  std::string patched;
  for (const auto& p : changed) patched += (patched.empty() ? "" : "; ") + p;
  emit(bj::object{{"event", "check"},
                  {"group", to_string(check_group::audit)},
                  {"name", "patched_globals"},
                  {"result", changed.empty() ? "pass" : "fail"},
                  {"detail", changed.empty() ? "torch, time and global numerics settings unchanged after every call"
                                             : patched + " (restored before the reference ran)"},
                  {"seconds", now_s() - t}});
}

}  // namespace rnx::verify::detail
