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
// sample sets; with `pairing`, a decision needs the threshold of look `look` (1-based; 0: the last) of its looks'
// alpha-spending schedule (look_schedule.hpp). The runner's sequential looks and the verdict (the last look) both
// decide through this, so they apply one rule to the same samples: a decision an earlier look took at its stricter
// threshold is the verdict's too.
comparison compare_measured(const run_result& base, const run_result& head, const gate_policy& policy,
                            const std::optional<pairing_info>& pairing, int look = 0);

// The overall answer for a set of per-configuration decisions (exposed for tests and the service).
overall overall_answer(const std::vector<config_verdict>& configs, const gate_policy& policy, std::string& reason);

}  // namespace rnx::stats
