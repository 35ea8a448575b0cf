// The verdict logic on top of rnx::store::database, shared by rnx-server and embedded mode (`rnx gate --store`).
//
//   rnx::store::database db(path);
//   auto project = db.ensure_project(run.project);
//   auto upload = rnx::store::upload_run(db, project.id, run);        // push runs become baselines
//   auto judged = rnx::store::judge_stored_run(db, upload.run.id, policy);
//   // judged.verdict: PASS/WARN/BLOCK against the newest same-env baseline of the base branch
//   rnx::store::accept_run(db, project.id, upload.run.id, "alice", "intended slowdown", 0);
#pragma once

#include "rnx/service/store.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::store {

using upload_outcome = database::insert_result;

// Checks what the store needs beyond the run schema (a branch to file it under), then stores it.
// Throws rnx::error(invalid) naming the JSON path, conflict for a duplicate upload.
upload_outcome upload_run(database& db, std::int64_t project_id, const run_document& run);

// rnx-server files a run under its environment's baselines, so a client must not choose the env_id: it must be the
// hash rnx computes from the environment's other fields (compute_env_id). rnx::error(invalid) naming
// $.environment.env_id otherwise. (The embedded store trusts the process it runs in.)
void check_env_id(const run_document& run);

// The branch whose baselines a run is compared with: its base_branch, else (a push) its own branch.
std::string comparison_branch(const run_document& run);

// Where the verdict is read, for the advice in its reasons: rnx-server names its API, the embedded store
// (`rnx gate --store PATH`) the `rnx accept` command on that file.
struct advice_route {
  std::string store_path;  // "" = the service
};
// "make run 12 the baseline with ...": the command that makes run `run_id` a baseline by hand on `route`.
std::string accept_advice(const advice_route& route, std::int64_t run_id);

struct judged_run {
  verdict_document verdict;
  std::optional<std::int64_t> baseline_run_id;
  std::int64_t verdict_id = 0;
};

// Compares run `run_id` with the newest baseline of its comparison branch in the same env_id
// (for a run that is itself a baseline: the one before it), stores the verdict and returns it.
// not_found when the run does not exist.
judged_run judge_stored_run(database& db, std::int64_t run_id, const gate_policy& policy,
                            const advice_route& route = {});

// WARN, every configuration `new` (or broken, with its error), with a reason naming the branch, the environment
// and how to get a baseline there.
verdict_document no_baseline_verdict(const run_document& head, std::int64_t head_run_id, std::string_view branch,
                                     const gate_policy& policy, const advice_route& route = {});

// After a push upload replaced a baseline: the new baseline judged against the previous one
// (stored as a "regression" verdict). nullopt when there was no previous baseline.
std::optional<judged_run> regression_check(database& db, const upload_outcome& upload, const gate_policy& policy);

// A pull request's paired verdict: the gate measured its base and head revisions side by side
// (`rnx bench --pair`), stored both runs and decided `decided`. The store does not take that verdict on trust: it
// derives the verdict again from the two stored runs under `policy` (the statistics are reproducible) and refuses
// (invalid, naming the first difference) a `decided` whose overall answer, configurations or decisions differ.
// Both runs must belong to `project_id` (forbidden otherwise), be distinct, share one environment and, when they
// carry pairing records, be the head and base sides of one paired run (invalid otherwise); not_found for a run
// that does not exist. Stores the derived verdict as a "paired" verdict of the head run (its baseline is the base
// run) and returns it; the same request again returns the stored one.
judged_run record_paired_verdict(database& db, std::int64_t project_id, std::int64_t head_run_id,
                                 std::int64_t base_run_id, const gate_policy& policy, const verdict_document& decided);

// Records run `run_id` (e.g. a PR run with an intended slowdown) as the newest baseline of its base
// branch in its environment, with who and why. conflict if it already is; invalid without a branch.
baseline_record accept_run(database& db, std::int64_t project_id, std::int64_t run_id, std::string_view accepted_by,
                           std::string_view reason, std::int64_t token_id);

}  // namespace rnx::store
