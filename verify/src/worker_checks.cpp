// The verifier inside rnx-verify-worker: every stage of each dtype in report order, then the audit rows the whole
// run decides; the stages live in worker_correctness.cpp, worker_audit.cpp and worker_timing.cpp.
#include "worker_checks.hpp"

#include "rnx/common/error.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace rnx::verify::detail {

std::map<long, double> thread_cpu_ms(pid_t pid) {
  std::map<long, double> out;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  static const double tick_ms = 1000.0 / static_cast<double>(::sysconf(_SC_CLK_TCK));
  for (std::filesystem::directory_iterator it(tasks, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    char* stop = nullptr;
    const long tid = std::strtol(name.c_str(), &stop, 10);
    if (!stop || *stop) continue;
    double ms = -1;
    // se.sum_exec_runtime (milliseconds, nanosecond-exact) where the kernel keeps scheduler statistics.
    std::ifstream sched(it->path() / "sched");
    for (std::string line; ms < 0 && std::getline(sched, line);) {
      if (line.rfind("se.sum_exec_runtime", 0) == 0) {
        const auto colon = line.find(':');
        if (colon != std::string::npos) ms = std::strtod(line.c_str() + colon + 1, nullptr);
      }
    }
    if (ms < 0) {
      std::ifstream stat(it->path() / "stat");
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const auto close = text.rfind(')');
      if (close == std::string::npos) continue;
      std::istringstream fields(text.substr(close + 2));
      std::string field;
      double utime = 0, stime = 0;
      for (int i = 3; fields >> field && i <= 15; ++i) {
        if (i == 14) utime = std::strtod(field.c_str(), nullptr);
        if (i == 15) stime = std::strtod(field.c_str(), nullptr);
      }
      ms = (utime + stime) * tick_ms;
    }
    out[tid] = ms;
  }
  return out;
}

candidate_slot::candidate_slot(std::filesystem::path job_path, at::Device device)
    : job_path_(std::move(job_path)), device_(device) {
  start();
}

void candidate_slot::start() {
  current_ = std::make_unique<remote_candidate>(job_path_, device_);
  threads_before_ = thread_cpu_ms(current_->pid());
}

std::string candidate_slot::load() { return current_->load(); }

std::string candidate_slot::restart_if_ended(const std::string& during) {
  std::string ended = current_->ended();
  if (ended.empty()) return "";
  if (current_->signal() == SIGSYS) {
    if (killed_by_filter_.empty()) killed_by_filter_ = ended;
    return "";
  }
  // A process ended here for breaking the protocol stays ended: what it wrote is not read again.
  if (ended.find("ended by the verifier") != std::string::npos || ended.find("protocol") != std::string::npos ||
      static_cast<int>(restarts_.size()) >= max_restarts) {
    return "";
  }
  for (const auto& p : current_->patched()) patched_before_.push_back(p);
  const candidate_costs c = current_->costs();
  costs_before_.import_s += c.import_s;
  costs_before_.first_call_s += c.first_call_s;
  costs_before_.other_calls_s += c.other_calls_s;
  costs_before_.calls += c.calls;
  restarts_.push_back("during " + during + ": " + ended);
  try {
    start();
    const std::string error = current_->load();
    if (!error.empty()) restarts_.back() += "; the new process did not load it: " + error;
  } catch (const std::exception& e) {
    restarts_.back() += "; a new process could not start: " + std::string(e.what());
  }
  return ended;
}

std::vector<std::string> candidate_slot::patched() const {
  std::vector<std::string> all = patched_before_;
  for (const auto& p : current_->patched()) {
    if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
  }
  return all;
}

candidate_costs candidate_slot::costs() const {
  candidate_costs c = current_->costs();
  c.import_s += costs_before_.import_s;
  c.first_call_s += costs_before_.first_call_s;
  c.other_calls_s += costs_before_.other_calls_s;
  c.calls += costs_before_.calls;
  return c;
}

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
  const std::vector<std::string> changed = slot_.patched();
  std::string patched;
  for (const auto& p : changed) patched += (patched.empty() ? "" : "; ") + p;
  emit_check(check_id::patched_globals, changed.empty() ? outcome::pass : outcome::fail,
             changed.empty() ? "torch, time and global numerics settings unchanged after every call"
                             : patched + " (restored before the reference ran)",
             now_s() - t);
}

}  // namespace rnx::verify::detail
