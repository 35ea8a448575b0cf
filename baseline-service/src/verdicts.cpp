// Baseline selection and verdicts over the store; the statistics themselves come from rnx::stats.
#include "rnx/service/verdicts.hpp"

#include "rnx/common/explanation_report.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace rnx::store {

namespace {

bool same_policy(const gate_policy& a, const gate_policy& b) {
  return a.rope == b.rope && a.probability == b.probability && a.min_samples == b.min_samples &&
         a.resamples == b.resamples && a.stat == b.stat && a.on_abstain == b.on_abstain &&
         a.report_only == b.report_only;
}

judged_run judge_against(database& db, const stored_run& head, const std::optional<baseline_record>& base,
                         std::string_view branch, const gate_policy& policy, verdict_kind kind,
                         const advice_route& route) {
  judged_run out;
  // Verdicts are reproducible (same samples, same policy: same answer), so a repeated request for the
  // same run against the same baseline returns the stored verdict instead of re-running the bootstrap.
  std::optional<std::int64_t> base_id;
  if (base) base_id = base->run_id;
  if (auto stored = db.latest_verdict(head.summary.id, base_id, kind)) {
    auto previous = verdict_from_json(json::parse(stored->second, "stored verdict"), "stored verdict");
    if (same_policy(previous.policy, policy)) {
      out.verdict = std::move(previous);
      out.baseline_run_id = base_id;
      out.verdict_id = stored->first;
      return out;
    }
  }
  if (base) {
    auto base_run = db.find_run(base->run_id);
    if (!base_run) {
      throw error(errc::internal, "baseline run " + std::to_string(base->run_id) + " is recorded but missing");
    }
    // One thread per verdict: the server's request pool already keeps every core busy.
    out.verdict = stats::judge_runs(base_run->document, head.document, policy, 1);
    out.verdict.baseline =
        baseline_ref{std::to_string(base_run->summary.id), base_run->summary.commit, base_run->summary.created_at};
    out.baseline_run_id = base_run->summary.id;
  } else {
    out.verdict = no_baseline_verdict(head.document, head.summary.id, branch, policy, route);
  }
  out.verdict.head_run_id = std::to_string(head.summary.id);
  out.verdict.env_id = head.summary.env_id;
  out.verdict.policy = policy;
  out.verdict_id = db.store_verdict(head.summary.id, out.baseline_run_id, kind, out.verdict);
  return out;
}

stored_run paired_side(database& db, std::int64_t project_id, std::int64_t run_id, std::string_view side) {
  auto run = db.find_run(run_id);
  if (!run) {
    throw error(errc::not_found, "the " + std::string(side) + " run " + std::to_string(run_id) + " does not exist");
  }
  auto project = db.find_project(project_id);
  if (!project || run->summary.project != project->name) {
    throw error(errc::forbidden, "the " + std::string(side) + " run " + std::to_string(run_id) +
                                     " belongs to another project; a paired verdict joins two runs of " +
                                     (project ? "project \"" + project->name + "\"" : std::string("one project")));
  }
  return std::move(*run);
}

void check_pairing(const stored_run& head, const stored_run& base) {
  const std::string ids =
      "runs " + std::to_string(head.summary.id) + " (head) and " + std::to_string(base.summary.id) + " (base)";
  if (head.summary.id == base.summary.id) {
    throw error(errc::invalid, "base_run_id: the base run is the head run itself; send the base revision's run");
  }
  if (head.summary.env_id != base.summary.env_id) {
    throw error(errc::invalid, ids + " were measured in different environments (" + head.summary.env_id + ", " +
                                   base.summary.env_id + "); a paired comparison measures both in one job");
  }
  const auto& hp = head.document.pairing;
  const auto& bp = base.document.pairing;
  if (!hp && !bp) return;  // prepared runs of one job (`rnx gate --results --base-results`) carry no record
  if (!hp || !bp || hp->id != bp->id || hp->side != pair_side::head || bp->side != pair_side::base) {
    throw error(errc::invalid, ids + " are not the head and base sides of one paired run (their pairing records " +
                                   "differ); upload the two documents `rnx bench --pair` wrote together");
  }
}

bool close(const std::optional<double>& a, const std::optional<double>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  return std::abs(*a - *b) <= 1e-9 * std::max({1.0, std::abs(*a), std::abs(*b)});
}

std::string shown(const std::optional<double>& x) {
  if (!x) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", *x);
  return buf;
}

// The first way `sent` differs from the verdict the store derived, or "" when it matches.
std::string first_difference(const verdict_document& derived, const verdict_document& sent) {
  if (derived.verdict != sent.verdict) {
    return "$.verdict.verdict is " + std::string(to_string(sent.verdict)) + ", the stored runs give " +
           std::string(to_string(derived.verdict));
  }
  if (derived.configs.size() != sent.configs.size()) {
    return "$.verdict.configs has " + std::to_string(sent.configs.size()) + " configurations, the stored runs " +
           std::to_string(derived.configs.size());
  }
  for (std::size_t i = 0; i < derived.configs.size(); ++i) {
    const auto& d = derived.configs[i];
    auto s = std::find_if(sent.configs.begin(), sent.configs.end(), [&](const auto& c) { return c.key == d.key; });
    if (s == sent.configs.end()) return "$.verdict.configs lacks " + d.key.label();
    if (s->result != d.result) {
      return d.key.label() + " is " + std::string(to_string(s->result)) + " in $.verdict, the stored runs give " +
             std::string(to_string(d.result));
    }
    const std::pair<const char*, std::pair<std::optional<double>, std::optional<double>>> numbers[] = {
        {"ratio", {s->ratio, d.ratio}},
        {"ci_lo", {s->ci_lo, d.ci_lo}},
        {"ci_hi", {s->ci_hi, d.ci_hi}},
        {"mde", {s->mde, d.mde}}};
    for (const auto& [field, values] : numbers) {
      if (close(values.first, values.second)) continue;
      return d.key.label() + ": " + field + " is " + shown(values.first) + " in $.verdict, the stored runs give " +
             shown(values.second);
    }
    if (s->pairing != d.pairing) {
      return d.key.label() + ": pairing is \"" + std::string(to_string(s->pairing)) +
             "\" in $.verdict, the stored runs give \"" + std::string(to_string(d.pairing)) + "\"";
    }
  }
  return {};
}

}  // namespace

judged_run record_paired_verdict(database& db, std::int64_t project_id, std::int64_t head_run_id,
                                 std::int64_t base_run_id, const gate_policy& policy, const verdict_document& decided) {
  validate(policy);
  stored_run head = paired_side(db, project_id, head_run_id, "head");
  stored_run base = paired_side(db, project_id, base_run_id, "base");
  check_pairing(head, base);
  judged_run out;
  out.baseline_run_id = base_run_id;
  if (auto stored = db.latest_verdict(head_run_id, base_run_id, verdict_kind::paired)) {
    out.verdict = verdict_from_json(json::parse(stored->second, "stored verdict"), "stored verdict");
    out.verdict_id = stored->first;
  }
  if (out.verdict_id == 0 || !same_policy(out.verdict.policy, policy)) {
    out.verdict_id = 0;
    // One thread per verdict, as for requested verdicts; the answer does not depend on it.
    out.verdict = stats::judge_runs(base.document, head.document, policy, 1);
    out.verdict.baseline = baseline_ref{std::to_string(base_run_id), base.summary.commit, base.summary.created_at};
    out.verdict.head_run_id = std::to_string(head_run_id);
    out.verdict.env_id = head.summary.env_id;
    out.verdict.policy = policy;
  }
  if (std::string diff = first_difference(out.verdict, decided); !diff.empty()) {
    throw error(errc::invalid, "the paired verdict sent does not follow from runs " + std::to_string(head_run_id) +
                                   " and " + std::to_string(base_run_id) + " under the policy sent: " + diff +
                                   "; send the verdict `rnx gate` decided from these two documents");
  }
  // The explanations the gate attached (profile diffs, counts) are not statistics the store can derive: they are
  // kept beside the derived decisions, which they never change (explanation_report.hpp, attach_explanation).
  if (out.verdict_id == 0) {
    for (auto& c : out.verdict.configs) {
      for (const auto& d : decided.configs) {
        if (d.key == c.key && d.explanation) attach_explanation(c, *d.explanation);
      }
    }
    out.verdict_id = db.store_verdict(head_run_id, base_run_id, verdict_kind::paired, out.verdict);
  }
  return out;
}

void check_env_id(const run_document& run) {
  const std::string expected = compute_env_id(run.env);
  if (run.env.env_id == expected) return;
  throw error(errc::invalid, "run document: $.environment.env_id: \"" + run.env.env_id.substr(0, 64) +
                                 "\" is not the hash of the environment's fields (they give \"" + expected +
                                 "\"); the service files runs by it, so it is computed, not chosen: upload the "
                                 "document rnx bench or rnx import wrote, unedited");
}

std::string comparison_branch(const run_document& run) {
  return run.base_branch.empty() ? run.branch : run.base_branch;
}

upload_outcome upload_run(database& db, std::int64_t project_id, const run_document& run) {
  if (run.branch.empty()) {
    throw error(errc::invalid,
                "run document: $.branch: the store needs the branch the run was measured on "
                "(set \"branch\", e.g. from GITHUB_HEAD_REF or GITHUB_REF_NAME)");
  }
  if (run.pull_request && run.base_branch.empty()) {
    throw error(errc::invalid,
                "run document: $.base_branch: a pull request run needs the branch it merges into "
                "(set \"base_branch\", e.g. from GITHUB_BASE_REF)");
  }
  return db.insert_run(project_id, run);
}

std::string accept_advice(const advice_route& route, std::int64_t run_id) {
  const std::string id = std::to_string(run_id);
  if (route.store_path.empty()) return "make run " + id + " the baseline with POST /api/v1/baselines";
  return "make run " + id + " the baseline with rnx accept --run-id " + id + " --store " + route.store_path +
         " --reason \"...\"";
}

verdict_document no_baseline_verdict(const run_document& head, std::int64_t head_run_id, std::string_view branch,
                                     const gate_policy& policy, const advice_route& route) {
  verdict_document v;
  v.verdict = overall::warn;
  v.reason = "no baseline of branch \"" + std::string(branch) + "\" in environment " + head.env.env_id +
             " yet: upload a run from \"" + std::string(branch) +
             "\" measured in this environment (a push build), or " + accept_advice(route, head_run_id);
  v.head_run_id = std::to_string(head_run_id);
  v.env_id = head.env.env_id;
  v.policy = policy;
  for (const auto& r : head.results) {
    config_verdict c;
    c.key = r.key();
    c.result = decision::new_config;
    // The statistic a verdict would compare (per process, then the geometric mean), as every table shows it.
    c.head_ms = stats::observed_statistic({r.samples_ms, r.groups}, policy.stat);
    c.n_head = static_cast<std::int64_t>(r.samples_ms.size());
    c.reason = "no baseline to compare with";
    c.head_unstable = r.unstable;
    if (r.unstable) c.reason += "; measured unstable: " + stats::unstable_line(r.message);
    if (r.status == result_status::error || r.status == result_status::diverged) {
      // A failing kernel is broken whether or not there is a baseline: its error must not hide behind "new".
      c.result = decision::broken;
      c.reason = "no baseline yet, and " + std::string(to_string(r.status)) + ": " + r.message;
    }
    v.configs.push_back(std::move(c));
  }
  if (std::any_of(v.configs.begin(), v.configs.end(), [](const auto& c) { return c.result == decision::broken; })) {
    std::string why;
    v.verdict = stats::overall_answer(v.configs, policy, why);
    v.reason += "; " + why;
  }
  return v;
}

judged_run judge_stored_run(database& db, std::int64_t run_id, const gate_policy& policy, const advice_route& route) {
  validate(policy);
  auto head = db.find_run(run_id);
  if (!head) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  std::string branch = comparison_branch(head->document);
  auto project = db.find_project(head->summary.project);
  if (!project) throw error(errc::internal, "run " + std::to_string(run_id) + " has no project");
  // A baseline run is judged against the baseline before it, never against itself or later ones.
  auto own = db.baseline_of_run(run_id);
  auto base = db.newest_baseline(project->id, branch, head->summary.env_id, run_id, own ? own->id : INT64_MAX);
  return judge_against(db, *head, base, branch, policy, verdict_kind::request, route);
}

std::optional<judged_run> regression_check(database& db, const upload_outcome& upload, const gate_policy& policy) {
  if (!upload.baseline || !upload.previous_baseline) return std::nullopt;
  auto head = db.find_run(upload.run.id);
  if (!head) return std::nullopt;
  return judge_against(db, *head, upload.previous_baseline, upload.baseline->branch, policy, verdict_kind::regression,
                       {});
}

baseline_record accept_run(database& db, std::int64_t project_id, std::int64_t run_id, std::string_view accepted_by,
                           std::string_view reason, std::int64_t token_id) {
  auto run = db.find_run(run_id);
  if (!run) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  std::string branch = comparison_branch(run->document);
  if (branch.empty()) {
    throw error(errc::invalid, "run " + std::to_string(run_id) + " names no base_branch or branch to accept it for");
  }
  return db.accept_baseline(project_id, run_id, branch, accepted_by, reason, token_id);
}

}  // namespace rnx::store
