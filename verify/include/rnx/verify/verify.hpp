// The correctness gate and anti-cheat audit: verify a candidate kernel against a reference, in a sandboxed worker.
//
//   rnx::verify::verify_options o;
//   o.reference = rnx::verify::reference_from_manifest("rnx.toml", "attention");  // or reference_from_file(...)
//   o.candidate = "attention_fast.py";
//   rnx::verify::verify_report r = rnx::verify::verify_candidate(o);
//   if (!r.accepted()) std::cout << rnx::verify::render_text(r);               // which stage or check failed
//   std::string for_pr = rnx::verify::render_markdown(r);                       // or to_json(r) for machines
//
// Usage errors (missing files, bad shapes) throw rnx::error; a rejected candidate is a report, never an exception.
// This header and the orchestrator are torch-free: libtorch and Python live in the worker (rnx-verify-worker).
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/verify/checks.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rnx::verify {

// What the candidate must reproduce: a file and entry, with declared inputs (empty for KernelBench files).
struct reference_spec {
  std::string name = "kernel";
  std::filesystem::path path;
  std::string entry;                        // empty: `run`, or KernelBench's Model
  std::vector<input_spec> inputs;           // B marks the batch dimension
  std::vector<std::int64_t> batches = {8};  // the declared (measured) batches
  std::vector<std::string> dtypes = {"float32"};
  std::string device = "auto";                  // auto | cpu | cuda | cuda:N
  std::map<std::string, tolerance> tolerances;  // per dtype, over torch.testing's defaults
};

// The reference of kernel `kernel` in a manifest; throws rnx::error(usage) naming the kernels it has.
reference_spec reference_from_manifest(const std::filesystem::path& manifest_path, const std::string& kernel);
// A reference file with inputs written as "q=B,8,128,64;k=B,8,128,64" (empty for KernelBench files).
reference_spec reference_from_file(const std::filesystem::path& path, const std::string& inputs,
                                   const std::string& entry = {});

// Limits of the sandbox the worker (and so the candidate) runs in: rnx::sandbox's, named here too.
using sandbox::sandbox_limits;

struct verify_options {
  reference_spec reference;
  std::filesystem::path candidate;
  std::string candidate_entry;  // empty: the reference's entry, or KernelBench's ModelNew
  std::uint64_t seed = 20261202;
  double speedup_limit = 10;    // candidate faster than this many times the eager reference: rejected
  bool speedup_review = false;  // mark such a speedup `review` (exit 0 unless review_rejects) instead
  bool review_rejects = false;  // treat "review" marks as rejections
  sandbox_limits limits;
  std::filesystem::path worker;     // empty: default_worker_path()
  std::filesystem::path cache_dir;  // compiled .cpp/.cu kernels; empty: the runner's default
};

// One row of the report: a correctness stage or an audit check.
struct check_row {
  check_group group = check_group::audit;
  std::string name;  // to_string of a check_id (checks.hpp): smoke, shape_sweep, ..., static_scan, sandbox
  outcome result = outcome::skip;
  std::string detail;  // why it passed/failed, with numbers
  double seconds = 0;
};

// What loading and calling the candidate cost in its own process (wall seconds; shown, never judged): how much of
// verify's time was the candidate's compilation (torch.compile, Triton, load_inline) and how much its calls.
struct candidate_costs {
  double compiler_stack_s = 0;  // torch's compiler stack, imported before the candidate (the baseline's, not its)
  double import_s = 0;
  double first_call_s = 0;  // compilation at the first call included
  double other_calls_s = 0;
  std::int64_t calls = 0;
};

struct verify_report {
  std::string reference;  // path[:entry]
  std::string candidate;
  std::string device;
  std::vector<std::string> dtypes;
  std::vector<check_row> checks;
  std::optional<double> speedup;  // eager reference time / candidate time, on the largest declared batch
  double seconds = 0;
  bool review_rejects = false;
  std::optional<candidate_costs> costs;  // absent when the worker did not say (the candidate never loaded)

  bool accepted() const;  // every row pass or skip (review too unless review_rejects)
  bool needs_review() const;
  const check_row* find(std::string_view name) const;
  std::vector<std::string> failed() const;    // names of failed rows
  std::vector<std::string> reviewed() const;  // names of rows marked for review
};

// Runs the whole gate and audit; throws rnx::error only for usage and input errors (exit 2 material).
// Side effect: marks the calling process non-dumpable (PR_SET_DUMPABLE 0) so the candidate cannot read the
// caller's environment through /proc/PID/environ. Blocks until the worker ends (at most limits.wall_s).
verify_report verify_candidate(const verify_options& options);

// $RNX_VERIFY_WORKER, else rnx-verify-worker beside the running executable, else on PATH.
std::filesystem::path default_worker_path();

boost::json::object to_json(const verify_report& report);
std::string render_text(const verify_report& report);
std::string render_markdown(const verify_report& report);

}  // namespace rnx::verify
