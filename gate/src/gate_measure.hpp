// `rnx gate`'s measuring steps: the service checked before the benchmark, the head (and, paired, the base) measured
// or read, the head run filed, what the stored baseline calls slower measured again (confirmed mode) and the drift
// check's paired measurement. Built into `rnx` itself, where `rnx bench` is (RNX_HAVE_TORCH).
#pragma once

#include "gate_drift.hpp"
#include "gate_judge.hpp"
#include "gate_merge.hpp"
#include "gate_plan.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <optional>

namespace rnx::gate {

// A service that cannot be used, and a missing or refused token, are found out before the benchmark, not after it.
// A service that cannot be used (whatever the cause) is one line on standard error, the report's first line
// (service_lead), and the job goes on without the service: store_and_judge does not call it. The token is checked
// only where the service answers and something is to be measured.
std::optional<service_problem> check_service(const gate_plan& plan);

// What the report leads with when the service cannot be used: "no verdict: ..." where the service decides (stored
// and confirmed modes), "verdict not stored: ..." where the job decided paired without it.
std::string service_lead(const gate_plan& plan, const service_problem& problem);

// The head run (and, paired, the base run): the merged shards, the prepared files given, or measured now by
// `rnx bench` (with --pair in paired mode).
measured_runs measure(const gate_plan& plan, const std::optional<merged_shards>& shards);

// The head run filed under what GitHub says was measured, checked (a usage error naming what it lacks and the flag
// that supplies it) and written to OUT/run.json.
run_document file_head_run(const gate_plan& plan, run_document head);

// Confirmed mode: the configurations the stored baseline calls slower are measured again, base and head
// interleaved process by process in this job (`rnx bench --pair` at the baseline's own commit), and the paired
// decision replaces the stored one. A whole run measured in a fast or slow spell of a shared machine then
// cannot block by itself. The note says what was measured again ("" when nothing was slower).
revised_verdict confirm_slower(const gate_plan& plan, verdict_document verdict);

// The drift check's paired measurement, for a job that measures paired itself (not --results, not --merge): the
// head beside the anchor's commit, only the configurations the anchor's stored run left undecided or called over
// budget. Empty where this job cannot benchmark.
measure_beside_anchor drift_measurement(const gate_plan& plan);

}  // namespace rnx::gate
