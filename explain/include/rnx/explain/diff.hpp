// The profile diff: two op profiles of one configuration (base, head) ranked into what changed, the counts that do
// not jitter beside the time, and what those counts say about the verdict's decision.
//
//   rnx::explanation e = rnx::explain::diff_profiles(base_profile, head_profile, 0.01);
//   rnx::explain::add_work_counts(e, base_result, head_result);
#pragma once

#include "rnx/common/explanation.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/optimize/profile.hpp"

#include <string>

namespace rnx::explain {

// Each row's calls and self time per kernel call (its profile's profiled_calls); a row on one side only is added or
// removed, a row called a different number of times is `calls`, else a `time` row kept only where it moved by at
// least 5% of itself and 1% of the larger side's time a call (the profiler's own jitter). Ranked: added, removed
// and call-count rows first, then by the time they moved. The counts: kernel launches (GPU profiles) or operator
// calls (CPU profiles) per call. counts_moved against `count_threshold`.
explanation diff_profiles(const optimize::op_profile& base, const optimize::op_profile& head, double count_threshold);

// The run documents' work (flops, bytes) of the two results, as counts beside the profiler's.
void add_work_counts(explanation& e, const run_result* base, const run_result* head);

// Adds (or replaces) a count and recomputes counts_moved.
void set_count(explanation& e, count_change c);

}  // namespace rnx::explain
