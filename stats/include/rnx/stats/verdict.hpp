// Whole-run verdicts: match configurations of two runs, compare each, map to PASS/WARN/BLOCK.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/stats/posterior.hpp"

#include <optional>

namespace rnx::stats {

// Compares every configuration of `head` with the same one in `base` and applies the gate policy.
// Fills configs, verdict, reason, policy and env_id; the caller fills baseline and head_run_id.
// The comparisons are spread over up to `threads` threads (0: one per core); the answer does not depend on it.
// A server that already answers requests side by side passes 1.
verdict_document judge_runs(const run_document& base, const run_document& head, const gate_policy& policy,
                            unsigned threads = 0);

// The comparison of two measured (ok) results of one configuration under `policy`: over paired block ratios when
// `pairing` says the two runs are one paired run and both results were measured in-process, else as separate
// sample sets; with `pairing`, the probability is split over its looks. The verdict and the runner's sequential
// looks both decide through this, so they apply one rule to the same samples.
comparison compare_measured(const run_result& base, const run_result& head, const gate_policy& policy,
                            const std::optional<pairing_info>& pairing);

// The overall answer for a set of per-configuration decisions (exposed for tests and the service).
overall overall_answer(const std::vector<config_verdict>& configs, const gate_policy& policy, std::string& reason);

}  // namespace rnx::stats
