// The optimize loop: ask a rewriter for candidates; verify each (correctness + anti-cheat); benchmark the
// survivors against the original in one paired run; judge with the Bayesian verdict; keep the best `faster` one
// and propose it as a commit (and a pull request).
//
//   rnx::optimize::optimize_options o;
//   o.manifest_path = "rnx.toml";
//   o.kernel = "attention";
//   o.budget = 3;
//   auto result = rnx::optimize::run_optimize(o);      // rnx::error only for usage/config/network failures
//   std::cout << rnx::optimize::render_attempts_markdown(result);
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/optimize/config.hpp"
#include "rnx/optimize/profile_kernel.hpp"
#include "rnx/optimize/proposal.hpp"
#include "rnx/verify/verify.hpp"

#include <boost/json/value.hpp>

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::optimize {

struct optimize_options {
  std::filesystem::path manifest_path = "rnx.toml";
  std::string kernel;
  std::optional<int> budget;            // overrides [optimize] budget
  std::optional<std::string> rewriter;  // --rewriter command:PATH | anthropic | openai
  // Benchmark settings for the paired runs (unset = the manifest's [bench]).
  std::optional<int> processes;
  std::optional<int> min_samples;
  std::optional<int> max_samples;
  std::optional<double> budget_ms;
  std::optional<double> warmup_ms;
  std::vector<std::string> runtimes;  // filters; empty = every one the manifest declares
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
  // The benchmark as verify times (docs/optimize.md): original and candidate each in worker processes of their own
  // and every timed call on fresh inputs. false (`--shared-process-benchmark`, for comparison only, as in
  // bench/optimize_cheats.py): both in one process, alternated in blocks on the same inputs at every call, which a
  // candidate that remembers answers or patches what the original calls can fool.
  bool isolated_benchmark = true;
  bool profile = true;  // profile the original for the rewriter
  profile_options profiling;
  verify::sandbox_limits verify_limits;
  bool commit = true;  // create the proposal branch when a rewrite is kept
  bool open_pr = false;
  pull_request_options pr;         // token, repository, base, remote (title/body are filled in)
  std::filesystem::path work_dir;  // candidates, manifests, records; empty = a fresh temporary folder
  std::ostream* log = nullptr;     // progress lines
};

// What became of one attempt: kept (the best faster one); faster, slower, equivalent, abstain or broken (the paired
// benchmark's verdict); rejected (by the verifier); error (the rewriter or the verifier failed).
enum class attempt_status { error, rejected, faster, slower, equivalent, abstain, broken, kept };
std::string_view to_string(attempt_status s);
std::optional<attempt_status> attempt_status_from_string(std::string_view text);

struct attempt {
  int index = 0;
  std::string source;
  std::filesystem::path file;  // where the candidate was written (inside work_dir)
  attempt_status status = attempt_status::error;
  bool correct = false;
  bool clean = false;
  bool review = false;  // the audit marked it for a person's review
  std::optional<verify::verify_report> audit;
  std::vector<config_verdict> configs;  // candidate (head) against original (base), one per configuration
  std::optional<double> speedup;        // geometric mean over configurations of base/head
  std::optional<double> p_faster;       // the smallest over configurations
  std::string reason;
  bool kept = false;
};

struct optimize_result {
  std::string kernel;
  std::filesystem::path kernel_file;
  std::string rewriter;  // as described by the provider
  std::optional<op_profile> profile;
  std::vector<run_result> baseline;  // the original's own benchmark, sent to the rewriter
  std::vector<attempt> attempts;
  std::optional<int> best;  // index into attempts
  gate_policy policy;
  std::optional<commit_proposal> proposal;
  std::optional<pull_request> pr;
  std::filesystem::path work_dir;
};

optimize_result run_optimize(const optimize_options& options);

// Rewrite | Decision | Correct | Anti-cheat | Speedup (P(faster)), one row per attempt.
std::string render_attempts_markdown(const optimize_result& r);
std::string render_attempts_text(const optimize_result& r);
// The PR body and step summary: the attempts, the kept candidate's benchmark and audit tables, the profile. Text a
// candidate produced (reasons, audit details) appears only as an excerpt of a few hundred bytes after the secret
// scan (rnx/common/secret_scan.hpp), with what was removed said.
std::string render_proposal_body(const optimize_result& r);
// The proposal commit's message: the title and the same tables, with nothing a candidate (or the rewriter) wrote:
// no reason, no audit detail.
std::string render_commit_message(const optimize_result& r);
std::string proposal_title(const optimize_result& r);
boost::json::value to_json(const optimize_result& r);

// The manifest with [optimize] removed and every kernel path absolute; `kernel`'s path replaced by `candidate`
// when given (how a candidate is benchmarked and verified without touching the user's tree).
std::string retarget_manifest(std::string_view text, const std::string& source, const std::filesystem::path& root,
                              const std::string& kernel, const std::filesystem::path& candidate);

}  // namespace rnx::optimize
