// Where the gate keeps runs and gets verdicts: the rnx-server API, or the embedded SQLite store.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/service/run_groups.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::gate {

struct uploaded_run {
  std::string id;
  bool baseline = false;        // stored as its branch's newest baseline (a push)
  bool already_stored = false;  // the identical document was uploaded before (a re-run job)
};

struct stored_run_ref {
  std::string id;
  std::string commit;
  std::string branch;
  std::string env_id;
  std::optional<std::int64_t> pull_request;
  std::string created_at;
  baseline_kind baseline_source = baseline_kind::unknown;  // baseline_history only
};

struct accepted_baseline {
  std::string run_id;
  std::string branch;
  std::string env_id;
};

// One configuration's numbers over recent runs, oldest first: each run's id and the statistic the verdict compares
// (each process's median, geometric mean over processes; store::run_number), as every page shows it.
struct config_numbers {
  config_key key;
  std::vector<std::pair<std::string, double>> points;
};

// A run group's verdict: unset while shards are missing and the group is not yet due (docs/scaling.md).
struct group_outcome {
  store::group_state state;
  std::optional<verdict_document> verdict;
};

// Failures are rnx::error: unavailable for a service that is down, slow or answering 5xx (the gate
// turns those into WARN), unauthorized/forbidden for tokens, invalid/not_found for the caller's mistakes.
class baseline_backend {
 public:
  virtual ~baseline_backend() = default;
  // "service http://..." or "embedded store .rnx/baselines.db", for messages.
  virtual std::string describe() const = 0;
  virtual uploaded_run upload(const run_document& run) = 0;
  // The stored run against the newest same-environment baseline of its comparison branch.
  virtual verdict_document judge(const std::string& run_id, const gate_policy& policy) = 0;
  // Before anything is measured or uploaded: does the store answer at all (the service's GET /healthz)? Throws
  // rnx::error (an http::request_failure where no HTTP answer came) naming what failed. The embedded store always
  // does.
  virtual void check_reachable() = 0;
  // Before anything is measured: can this job store runs of `project` (a push run, which moves a baseline, when
  // `push`)? Throws unauthorized / forbidden naming the token and the fix; unavailable when the service cannot be
  // asked (the gate then measures and reports the outage as before). The embedded store always can.
  virtual void check_access(const std::string& project, bool push) = 0;
  // A pull request's paired verdict, stored beside its two uploaded runs. The store derives it again from them
  // and refuses (invalid) a verdict that does not follow; returns the stored verdict, whose baseline is the base
  // run, so the head run's page shows what the gate decided.
  virtual verdict_document record_paired(const std::string& head_run_id, const std::string& base_run_id,
                                         const gate_policy& policy, const verdict_document& decided) = 0;
  // Runs of `project` on `branch`, newest first.
  virtual std::vector<stored_run_ref> runs_of_branch(const std::string& project, const std::string& branch,
                                                     int limit) = 0;
  virtual accepted_baseline accept(const std::string& run_id, const std::string& accepted_by,
                                   const std::string& reason) = 0;
  // Numbers per configuration over the newest `limit` runs of every branch in environment `env_id` (the PR
  // comment's sparklines keep those of the base branch's baselines).
  virtual std::vector<config_numbers> recent_numbers(const std::string& project, const std::string& env_id,
                                                     int limit) = 0;
  // The baselines of `branch` in environment `env_id`, newest first (at most `limit`): the runs its history is made
  // of, as the drift check walks it back to an anchor.
  virtual std::vector<stored_run_ref> baseline_history(const std::string& project, const std::string& branch,
                                                       const std::string& env_id, int limit) = 0;
  // A stored run's document.
  virtual run_document fetch_run(const std::string& run_id) = 0;
  // The pages of report.html for a stored run: its evidence page (service), or the project's overview, the
  // histories of its configurations and its evidence (embedded store).
  virtual std::vector<pages::page> report_pages(const std::string& project, const std::string& run_id) = 0;
  // A shard of a sharded run (its document has "shard"): held in its run group until the group is formed.
  virtual store::group_state upload_shard(const run_document& shard) = 0;
  // The group's verdict once complete or due (the missing shards' configurations named), else pending.
  virtual group_outcome judge_group(const std::string& project, const std::string& group,
                                    const gate_policy& policy) = 0;
};

std::unique_ptr<baseline_backend> make_service_backend(std::string url, std::string token,
                                                       std::chrono::milliseconds timeout);
// Opens (creating folders and file as needed) the SQLite store at `path`.
// `group_timeout`: how long after its first shard a run group of the embedded store waits for the others (the
// service has its own, rnx-server --shard-timeout).
std::unique_ptr<baseline_backend> make_embedded_backend(const std::string& path,
                                                        std::chrono::seconds group_timeout = std::chrono::minutes(60));

}  // namespace rnx::gate
