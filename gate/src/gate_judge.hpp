// `rnx gate`'s judging steps, each returning what the next needs: the head run stored and judged (or a run group's
// verdict), the paired verdict kept beside it, the drift budget, a new baseline's wording, the advice on accepting
// and the recent history the report draws.
#pragma once

#include "gate_backend.hpp"
#include "gate_drift.hpp"
#include "gate_plan.hpp"
#include "gate_report.hpp"

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rnx::gate {

// The runs a job judges: the head and, paired, the base measured beside it.
struct measured_runs {
  run_document head;
  std::optional<run_document> base;
  std::string pair_ref;  // paired: the base revision (the plan's, or the merged shards' base commit)
};

// What the store holds of this job and what it answered.
struct store_answer {
  std::unique_ptr<baseline_backend> backend;  // null when it could not be opened
  bool embedded = false;                      // the embedded store rather than rnx-server
  std::optional<uploaded_run> upload;         // the head run as stored; nullopt when it was not
  verdict_document verdict;                   // outside paired mode: the store's verdict, or WARN when it failed
  std::string note;                           // paired: why the run was not stored for history; "" when it was
};

// A job judged: its runs, the store's answer, and the report's facts so far (mode, event, commit, runner label,
// backend, run id, note).
struct judged_job {
  measured_runs runs;
  store_answer store;
  report_facts facts;
};

// Uploads the head run and, outside paired mode, asks the backend's verdict. An outage of the store (or a fork's
// pull request without RNX_TOKEN) gives a WARN verdict instead of failing the job. With a `problem` found before
// measuring, the service is not called: the report leads with it (facts.lead) and, outside paired mode, the verdict
// is WARN with that reason.
judged_job store_and_judge(const gate_plan& plan, measured_runs runs,
                           const std::optional<service_problem>& problem = std::nullopt);

// The final job of a sharded matrix with a store the shards uploaded to: the run group's verdict, once every shard
// has arrived or the group is due, reported like any verdict (one comment, one status).
judged_job judge_group(const gate_plan& plan);

// On a pull request judged against the stored baseline: how an intended slowdown becomes the baseline ("" where
// none is offered).
std::string offer_accept(const gate_plan& plan, const store_answer& store, const std::string& run_id);

// A verdict as a step revised it, and that step's words for the report ("" = none).
struct revised_verdict {
  verdict_document verdict;
  std::string note;
};

// Paired: the verdict is the head against the base measured beside it.
verdict_document judge_paired(const gate_plan& plan, const measured_runs& runs, const std::string& head_run_id);

// Paired: the base run and the verdict kept on the store beside the head run, so the run page the comment links to
// shows what this job decided. A failure of the store is the note, never a different verdict.
revised_verdict store_paired(const gate_plan& plan, const judged_job& job, verdict_document verdict);

// [gate] drift_budget: a pull request's head is also judged against the anchor's stored run, and, where that leaves
// a configuration undecided or over budget and `measure_paired` is given, against the anchor's commit measured
// beside it (gate_drift.cpp). The note is the check's Markdown, "" when no budget is set.
revised_verdict check_drift_budget(const gate_plan& plan, const judged_job& job, verdict_document verdict,
                                   measure_beside_anchor measure_paired);

// A run that became its branch's baseline (a push, or a local run on the base branch) says so, and the first one
// does not also ask for a baseline.
verdict_document note_new_baseline(const gate_plan& plan, const judged_job& job, verdict_document verdict);

// The stored run's page on the service, and the base branch's baselines the report draws as sparklines.
struct run_history {
  std::string run_url;  // "" for the embedded store or a run not stored
  std::vector<std::pair<std::string, std::vector<double>>> history;
};
run_history recent_history(const gate_plan& plan, const judged_job& job);

}  // namespace rnx::gate
