// The correctness stages: smoke, shape sweep (with the shape_specialization audit row it measures), stability,
// determinism and edge cases.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "rnx/common/error.hpp"
#include "rnx/runner/tolerance.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <set>

namespace rnx::verify::detail {

namespace {

// Runs a list of cases as one row: fail on any failure, pass when at least one applied, skip otherwise.
struct stage_tally {
  int passed = 0;
  int failed = 0;
  int skipped = 0;
  int narrowed = 0;
  std::vector<std::string> failures;
  std::vector<std::string> skips;
  std::vector<std::string> narrowings;
  void add(const case_result& r) {
    if (r.status == case_result::state::pass) ++passed;
    if (r.status == case_result::state::narrowed) {
      ++narrowed;
      if (narrowings.size() < 3) narrowings.push_back(r.message);
    }
    if (r.status == case_result::state::fail) {
      ++failed;
      if (failures.size() < 3) failures.push_back(r.message);
    }
    if (r.status == case_result::state::not_applicable) {
      ++skipped;
      if (skips.size() < 2) skips.push_back(r.message);
    }
  }
  // A refused foreign layout with nothing wrong is a narrowing of the contract: for review, never a pass.
  outcome result() const {
    if (failed) return outcome::fail;
    if (narrowed) return outcome::review;
    return passed ? outcome::pass : outcome::skip;
  }
  std::string detail() const {
    std::string d = std::to_string(passed) + " passed, " + std::to_string(failed) + " failed" +
                    (narrowed ? ", " + std::to_string(narrowed) + " narrowing the contract" : "") +
                    (skipped ? ", " + std::to_string(skipped) + " not applicable" : "");
    for (const auto& f : failures) d += "; " + f;
    if (narrowed) d += "; narrows the contract:";
    for (const auto& n : narrowings) d += " " + n + ";";
    if (!failed) {
      for (const auto& s : skips) d += "; " + s;
    }
    return d;
  }
};

}  // namespace

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
  row(check_id::smoke, smoke.status == case_result::state::pass ? outcome::pass : outcome::fail,
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
  // Each varied size once smaller (the next lower prime) and once larger (one more): a path specialised to the
  // measured size shows on either side of it, whether the size is a manifest's, a module variable or a literal
  // shape of the reference's get_inputs().
  for (const auto& [name, size] : dims) {
    if (size > 3) unseen.push_back({declared.front(), {{name, prev_prime(size)}}});
    if (size > 1) unseen.push_back({declared.front(), {{name, size + 1}}});
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
  row(check_id::shape_sweep, sweep.result(), sweep.detail(), t, dtype);
  // Special-casing: right on the measured shapes, wrong on shapes nobody measured.
  {
    std::string d;
    outcome result = outcome::pass;
    if (unseen_tally.failed) {
      result = outcome::fail;
      d = (declared_tally.failed ? "wrong on declared shapes too; "
                                 : "right on every declared shape but wrong on " + std::to_string(unseen_tally.failed) +
                                       " unseen one(s): ") +
          unseen_tally.failures.front();
    } else if (unseen_tally.passed == 0) {
      result = outcome::skip;
      d = "no unseen shape could be run" + (unseen_tally.skips.empty() ? "" : ": " + unseen_tally.skips.front());
    } else {
      d = std::to_string(unseen_tally.passed) + " unseen shape(s) agree with the reference";
    }
    row(check_id::shape_specialization, result, d, t, dtype);
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
  // Every transform but the shift keeps what structure the inputs have (zeros where get_inputs() puts them: a
  // triangular or masked matrix stays one; signs and ratios where it scales). The shift fills every zero, so a
  // reference whose inputs come from its own get_inputs() gets new draws of it under other seeds instead: inputs
  // like its own, which a rewrite may rely on.
  std::vector<scaled> transforms = {
      {"scaled by 1e-3", [](const at::Tensor& x) { return x * 1e-3; }},
      {"scaled by 1e3", [](const at::Tensor& x) { return x * 1e3; }},
      {"all negative (-10|x|)", [](const at::Tensor& x) { return x.abs() * -10.0; }},
      {"mixed signs and magnitudes (x * 10^U(-3,3))",
       [spread_seed](const at::Tensor& x) {
         at::Generator g = at::make_generator<at::CPUGeneratorImpl>(spread_seed);
         return x * at::pow(10.0, at::rand(x.sizes(), g, at::TensorOptions().dtype(x.scalar_type())) * 6 - 3);
       }},
  };
  if (!pair_.kernelbench()) {
    transforms.insert(transforms.begin() + 2,
                      scaled{"shifted by +100 (overflows a naive exp)", [](const at::Tensor& x) { return x + 100.0; }});
  }
  for (const auto& tr : transforms) {
    stability.add(evaluate(
        {std::string("inputs ") + tr.label, smoke_shape, next_seed(), tr.f, {}, stability_rounding_draws}, dtype));
  }
  if (pair_.kernelbench()) {
    for (int draw = 0; draw < 2; ++draw) {
      const std::uint64_t seed = next_seed();
      stability.add(evaluate({"a new draw of get_inputs() (seed " + std::to_string(seed) + ")",
                              smoke_shape,
                              seed,
                              {},
                              {},
                              stability_rounding_draws},
                             dtype));
    }
  }
  row(check_id::stability, stability.result(), stability.detail(), t, dtype);
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
      std::vector<at::Tensor> first_copy = clone_all(first);
      std::vector<at::Tensor> second = candidate_call(b_in, dtype, smoke_shape);
      synchronize_device(pair_.device());
      for (int i : candidate().last_notes().reuses_previous) {
        if (aliasing_.size() < 4) {
          aliasing_.push_back("output " + std::to_string(i) +
                              " of a second call reuses the first call's memory "
                              "(the next call overwrites a result already handed out)");
        }
      }
      runner::check_result again = runner::compare_outputs(second, first_copy, tol_for(dtype));
      bool bitwise = again.ok && again.max_abs_err == 0;
      row(check_id::determinism, again.ok ? outcome::pass : outcome::fail,
          again.ok ? (bitwise ? "bitwise identical"
                              : "within tolerance, not bitwise identical (max diff " + fmt(again.max_abs_err) + ")")
                   : "two calls on identical inputs disagree: " + again.message,
          t, dtype);
    } catch (const std::exception& e) {
      row(check_id::determinism, outcome::fail, e.what(), t, dtype);
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
  row(check_id::edge_cases, edges.result(), edges.detail(), t, dtype);
}

}  // namespace rnx::verify::detail
