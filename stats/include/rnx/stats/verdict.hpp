// Whole-run verdicts: match configurations of two runs, compare each, map to PASS/WARN/BLOCK.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

namespace rnx::stats {

// Compares every configuration of `head` with the same one in `base` and applies the gate policy.
// Fills configs, verdict, reason, policy and env_id; the caller fills baseline and head_run_id.
verdict_document judge_runs(const run_document& base, const run_document& head, const gate_policy& policy);

// The overall answer for a set of per-configuration decisions (exposed for tests and the service).
overall overall_answer(const std::vector<config_verdict>& configs, const gate_policy& policy, std::string& reason);

}  // namespace rnx::stats
