// The audit stages that run the candidate against the reference: fresh inputs, stale memory, ignored inputs,
// precision and hidden work.
#include "worker_checks.hpp"

#include "device_checks.hpp"
#include "rnx/runner/tolerance.hpp"

#include <algorithm>
#include <cmath>

namespace rnx::verify::detail {

// Fresh inputs: a second set of values must give the second set's answer.
void verifier::stage_fresh_inputs(dtype_run& run) {
  const at::ScalarType dtype = run.dtype;
  const shape_variant& smoke_shape = run.smoke_shape;
  auto next_seed = [&run] { return run.next_seed(); };
  const double t = now_s();
  {
    shape_variant sh = smoke_shape;
    std::vector<at::Tensor> a_base = make_base({"", sh, next_seed(), {}, {}});
    std::vector<at::Tensor> a_in = place_all(a_base, dtype, pair_.device());
    try {
      std::vector<at::Tensor> first = candidate_call(a_in, dtype, sh);
      std::vector<at::Tensor> first_copy = clone_all(first);
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
      row(check_id::fresh_inputs, second.status == case_result::state::fail ? outcome::fail : outcome::pass, d, t,
          dtype);
    } catch (const std::exception& e) {
      row(check_id::fresh_inputs, outcome::fail, e.what(), t, dtype);
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
    std::vector<at::Tensor> narrow = place_all(base, dtype, pair_.device());
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
    row(check_id::stale_memory, r.status == case_result::state::fail ? outcome::fail : outcome::pass,
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
      std::vector<at::Tensor> base_in = place_all(base, dtype, pair_.device());
      std::vector<at::Tensor> cand_base = candidate_call(base_in, dtype, smoke_shape);
      std::vector<at::Tensor> cand_base_copy;
      cand_base_copy.reserve(cand_base.size());
      for (const auto& o : cand_base) cand_base_copy.push_back(o.detach().to(at::kCPU).clone());
      std::vector<at::Tensor> wide_base = widen_all(base, dtype, pair_.device());
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
        if (!runner::check_within(cand_changed, ref_changed, tolerance_for(wide, ref_changed, dtype, smoke_shape).first,
                                  yard, runner::yard_basis::trusted_reference)
                 .ok) {
          bool unchanged = runner::compare_outputs(cand_changed, cand_base_copy, tol_for(dtype)).ok;
          ignored.push_back(
              name + (unchanged ? " (the output did not change when it did)" : " (wrong output once it changed)"));
        }
      }
    } catch (const std::exception& e) {
      failure = e.what();
    }
    // A module's parameters are inputs too: perturbed, in the reference and the candidate alike.
    outcome parameters_result = outcome::skip;
    std::string parameters;
    if (failure.empty() && pair_.kernelbench()) {
      parameters = perturbed_parameters(smoke_shape, dtype, next_seed(), parameters_result);
    }
    std::string d;
    outcome result = outcome::pass;
    if (!failure.empty()) {
      result = outcome::fail;
      d = failure;
    } else if (!ignored.empty()) {
      result = outcome::fail;
      d = "the reference depends on it but the candidate does not follow: ";
      for (std::size_t i = 0; i < ignored.size(); ++i) d += (i ? ", " : "") + ignored[i];
    } else if (checked.empty()) {
      result = outcome::skip;
      d = "no input changes the reference's output";
    } else {
      d = "follows every input the reference depends on (" + std::to_string(checked.size()) + ")";
    }
    if (!irrelevant.empty()) {
      d += "; the reference ignores:";
      for (const auto& n : irrelevant) d += " " + n;
    }
    if (!parameters.empty()) {
      if (parameters_result == outcome::fail || (parameters_result == outcome::review && result != outcome::fail)) {
        d = parameters + "; " + d;
        result = parameters_result;
      } else if (parameters_result == outcome::pass && result == outcome::skip) {
        d = parameters + "; " + d;
        result = outcome::pass;
      } else {
        d += "; " + parameters;
      }
    }
    row(check_id::ignored_inputs, result, d, t, dtype);
  }
}

// The module-parameter case: the reference's and the candidate's parameters of the same names and shapes moved by
// one random draw (rnx_verify.perturb_parameters), so a rewrite that is right only at their initial values (a
// LayerNorm's weight of ones and bias of zeros, ignored) is wrong here. A candidate whose parameters are not the
// reference's by name and shape is left as built and marked for review: its use of them is then unchecked.
std::string verifier::perturbed_parameters(const shape_variant& shape, at::ScalarType dtype, std::uint64_t seed,
                                           outcome& result) {
  shape_variant perturbed = shape;
  perturbed.parameters_seed = (seed & 0x7fffffff) | 1;
  case_result r = evaluate({"module parameters perturbed", perturbed, seed, {}, {}}, dtype);
  const std::string what = pair_.reference().parameters_note();
  const std::string theirs = candidate().last_notes().parameters;
  if (what == "none" || what.empty()) {
    result = outcome::skip;
    return "";  // the reference has no parameters to vary
  }
  const std::string names = what.rfind("perturbed: ", 0) == 0 ? what.substr(11) : what;
  if (theirs.rfind("unmatched", 0) == 0) {
    result = outcome::review;
    return "the candidate's module parameters cannot be matched to the reference's by name and shape (" +
           theirs.substr(std::min<std::size_t>(theirs.size(), 11)) +
           "), so whether it uses them was not checked: keep the reference's parameter names and shapes";
  }
  if (r.status == case_result::state::fail || r.status == case_result::state::narrowed) {
    result = outcome::fail;
    return "wrong with the module's parameters moved from their initial values (" + names +
           "): it assumes their defaults or ignores them; " + r.message;
  }
  if (r.status == case_result::state::not_applicable) {
    result = outcome::skip;
    return "module parameters perturbed: not applicable (" + r.message + ")";
  }
  result = outcome::pass;
  return "follows its module parameters (" + names + " perturbed)";
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
      row(check_id::precision, outcome::skip, r.message, t, dtype);
    } else if (r.out.empty() || r.ref64.empty()) {
      row(check_id::precision, outcome::fail, r.message, t, dtype);
    } else {
      double cand_err = max_error(r.out, r.ref64);
      double floor = 4 * dtype_eps(dtype) * std::max(r.ref_max, 1e-30);
      // A reduction's accumulation allowance counts as the dtype's own error too (tolerance_for): an honest
      // reordering of a long sum is off by that much where the eager reference, summing in its own order, is not.
      floor = std::max(floor, r.allowance / runner::yard_factor);
      double ratio = cand_err / std::max(r.yard, floor);
      constexpr double limit = 256;
      bool bad = !std::isfinite(ratio) || ratio > limit;
      row(check_id::precision, bad ? outcome::fail : outcome::pass,
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
    row(check_id::hidden_work, outcome::skip,
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
      hidden_work_result h = candidate().hidden_work(in, dtype, sh, calls);
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
      row(check_id::hidden_work, (lingering || h.stream_changed) ? outcome::fail : outcome::pass, d, t, dtype);
    } catch (const std::exception& e) {
      row(check_id::hidden_work, outcome::fail, e.what(), t, dtype);
    }
  }
}

}  // namespace rnx::verify::detail
