// The verifier inside rnx-verify-worker: every stage of each dtype in report order, then the audit rows the whole
// run decides; the stages live in worker_correctness.cpp, worker_audit.cpp and worker_timing.cpp.
#include "worker_checks.hpp"

#include "rnx/common/error.hpp"

#include <algorithm>

namespace rnx::verify::detail {

void verifier::row(check_id id, outcome result, const std::string& detail, double started, at::ScalarType dtype) {
  emit_check(id, result, detail, now_s() - started, runner::dtype_name(dtype));
}

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

void verifier::run_all() {
  for (const auto& name : job_.dtypes) {
    at::ScalarType dtype = runner::parse_dtype(name);
    try {
      run_dtype(dtype);
    } catch (const error& e) {
      if (e.code() == errc::invalid || e.code() == errc::usage) throw;
      emit_check(check_id::smoke, outcome::fail, e.what(), 0, name);
    }
  }
  const double t = now_s();
  emit_check(check_id::input_mutation, mutations_.empty() ? outcome::pass : outcome::fail,
             mutations_.empty() ? "inputs compared bitwise before and after every call"
                                : mutations_.front() + " (" + std::to_string(mutations_.size()) + " case(s))",
             now_s() - t);
  emit_check(check_id::output_aliasing, aliasing_.empty() ? outcome::pass : outcome::fail,
             aliasing_.empty() ? "no output shares memory with an input or an earlier result" : aliasing_.front(),
             now_s() - t);
  const std::vector<std::string>& changed = candidate_.patched();
  std::string patched;
  for (const auto& p : changed) patched += (patched.empty() ? "" : "; ") + p;
  emit_check(check_id::patched_globals, changed.empty() ? outcome::pass : outcome::fail,
             changed.empty() ? "torch, time and global numerics settings unchanged after every call"
                             : patched + " (restored before the reference ran)",
             now_s() - t);
}

}  // namespace rnx::verify::detail
