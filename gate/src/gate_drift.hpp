// The gate's drift budget: a pull request's head judged against an older stored run of its base branch (the
// anchor), so that slowdowns each inside the band cannot add up unnoticed; and the commits the history blames.
// Where the stored run leaves a configuration undecided or calls it over budget, the gate can measure the head beside
// the anchor's commit (a callback of its own: this file starts no process).
#pragma once

#include "gate_backend.hpp"

#include "rnx/common/drift_settings.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <boost/json/value.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::gate {

// One step of the stored history between the anchor and the head: a baseline run against the one before it.
struct drift_step {
  std::string commit;  // the later run's commit (the head's for the last step)
  std::string run_id;  // the later run ("" for the head when it was not stored)
  double ratio = 1;
  double lo = 1;
  double hi = 1;
  double p_slower = 0;  // P(the step is a slowdown at all)
  bool blamed = false;  // p_slower >= the probability in force
};

// Which comparison with the anchor decided a configuration: the anchor's stored run against the head's run, or the
// anchor's commit measured again beside the head in this job (paired), for configurations the stored one left
// undecided or called over budget.
enum class drift_method { stored, paired };
std::string_view to_string(drift_method m);  // "stored", "paired"
std::optional<drift_method> drift_method_from_string(std::string_view s);

struct drift_config {
  config_key key;
  drift_method method = drift_method::stored;
  decision result = decision::abstain;  // against the anchor, with rope = the budget: slower = over budget
  double ratio = 1;
  double lo = 1;
  double hi = 1;
  double p_over = 0;              // P(ratio > 1 + budget)
  std::vector<drift_step> steps;  // filled for configurations over budget
  std::vector<std::string> blamed_commits;
  std::string bisect_command;  // over budget: the `rnx bisect` that names the slowing commits paired
};

struct drift_finding {
  bool checked = false;
  std::string reason;  // one line: what was found, or why nothing was checked
  std::string anchor;  // the setting, "tag:v*"
  std::string anchor_run_id;
  std::string anchor_commit;
  std::string anchor_created_at;
  std::string anchor_label;  // "tag v1.0", "the baseline of 2026-11-03", "the accepted baseline"
  double budget = 0;
  drift_action action = drift_action::warn;
  bool exceeded = false;
  std::vector<drift_config> configs;
  // When a configuration is over budget: the first-parent commits after the anchor up to the head, oldest first
  // (git rev-list), the ones `rnx bisect` searches.
  std::vector<std::string> commits_since_anchor;
};

// The head and the anchor's commit measured side by side in this job, paired.
struct anchor_pair {
  run_document anchor;
  run_document head;
};
// Measures `configs` of the head beside `anchor_commit` paired, the sequential looks deciding with `rope` as their
// band (the budget). Throws rnx::error when it cannot (the commit is not here, the benchmark failed).
using measure_beside_anchor =
    std::function<anchor_pair(const std::string& anchor_commit, const std::vector<config_key>& configs, double rope)>;

struct drift_request {
  const run_document& head;
  std::string base_branch;
  std::optional<std::string> head_run_id;  // the head's stored run, left out of the history walked
  drift_settings settings;
  gate_policy policy;                         // probability and resamples in force
  std::filesystem::path repo_dir;             // where git resolves tag anchors
  std::string now;                            // RFC 3339, for days:N
  measure_beside_anchor measure_paired = {};  // empty: the stored comparison alone (no runner, not paired)
};

// Finds the anchor's stored run in the head's environment and judges the head against it; the configurations that
// comparison leaves undecided or calls over budget are measured paired through request.measure_paired, when given,
// and judged again.
// Never throws for a missing anchor or history (checked = false with the reason), nor for a paired measurement that
// fails (the reason says so and the stored decision stands); backend failures are rnx::error as the backend's.
drift_finding check_drift(baseline_backend& backend, const drift_request& request);

// An exceeded budget turns PASS into WARN (drift_action warn) or into BLOCK (block), and adds the reason.
void apply_drift(verdict_document& verdict, const drift_finding& finding);

// drift.json beside verdict.json.
boost::json::value drift_json(const drift_finding& finding);
// Terminal text (escaped) and Markdown (escaped) for the report.
std::string render_drift_text(const drift_finding& finding);
std::string render_drift_markdown(const drift_finding& finding);

// The gate's one call: when the manifest at `config` sets [gate] drift_budget, checks the head (a pull request's run)
// against the anchor, applies the finding to `verdict`, writes drift.json into `out_dir` and prints the finding.
// Returns the report's Markdown ("" when no budget is set). A backend that fails is a line in the report, never a
// failed gate.
struct drift_gate_inputs {
  std::string config;  // rnx.toml
  std::filesystem::path out_dir;
  std::string base_branch;
  std::string head_run_id;                    // "" when the head was not stored
  measure_beside_anchor measure_paired = {};  // the gate's paired measurement; empty = stored comparison alone
};
std::string gate_drift_check(verdict_document& verdict, baseline_backend& backend, const run_document& head,
                             const drift_gate_inputs& inputs, const gate_policy& policy);

}  // namespace rnx::gate
