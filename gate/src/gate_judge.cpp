// `rnx gate`'s judging steps: store and judge, a run group's verdict, paired, drift, new baseline, accept, history.
#include "gate_judge.hpp"

#include "gate_measure.hpp"
#include "gate_merge.hpp"
#include "gate_paired.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/common/text.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

namespace rnx::gate {

namespace {

verdict_document warn_verdict(const std::string& reason, const gate_policy& policy, const run_document& head) {
  verdict_document v;
  v.verdict = overall::warn;
  v.reason = reason;
  v.policy = policy;
  v.env_id = head.env.env_id;
  return v;
}

// The baseline store being down, slow or broken is never the pull request's fault.
bool is_outage(const error& e, bool embedded) {
  return e.code() == errc::unavailable || (embedded && e.code() == errc::internal);
}

// What the report says of the job before anything revises the verdict.
report_facts job_facts(const gate_plan& plan, gate_mode mode, const run_document& head, const store_answer& store) {
  report_facts facts;
  facts.mode = std::string(to_string(mode));
  facts.event = std::string(to_string(plan.ctx.event));
  facts.commit = head.commit;
  facts.runner_label = plan.policy.runner_label;
  if (store.backend) facts.backend = store.backend->describe();
  if (store.upload) facts.run_id = store.upload->id;
  facts.note = store.note;
  facts.light = light_rows(head);
  if (auto sheet = datasheet_for(head.env.device)) facts.datasheet = sheet->source;
  return facts;
}

bool embedded_store(const gate_plan& plan) {
  return resolve_service_url(plan.flags.backend, plan.manifest_ptr()).url.empty();
}

}  // namespace

judged_job store_and_judge(const gate_plan& plan, measured_runs runs, const std::optional<service_problem>& problem) {
  store_answer store;
  store.embedded = embedded_store(plan);
  const run_document& head = runs.head;
  if (problem) {
    const std::string lead = service_lead(plan, *problem);
    if (!plan.paired) store.verdict = warn_verdict(lead, plan.policy.policy, head);
    report_facts facts = job_facts(plan, plan.reported_mode(), head, store);
    facts.lead = lead;
    facts.lead_is_error = plan.on_service_error == service_error_action::fail;
    return {std::move(runs), std::move(store), std::move(facts)};
  }
  try {
    store.backend = open_backend(plan.flags.backend, plan.manifest_ptr()).backend;
    store.upload = store.backend->upload(head);
    std::cout << "rnx gate: stored run " << store.upload->id << " in the " << store.backend->describe()
              << (store.upload->already_stored ? " (it was uploaded before)" : "")
              << (store.upload->baseline ? " as a baseline of " + head.branch : std::string()) << "\n";
    if (!plan.paired) store.verdict = store.backend->judge(store.upload->id, plan.policy.policy);
  } catch (const error& e) {
    // GitHub passes no secrets to pull requests from forks: without RNX_TOKEN the service must refuse,
    // and that is no reason to fail a contributor's build.
    const bool fork_without_token =
        e.code() == errc::unauthorized && plan.ctx.pull_request_from_fork && env_or_empty("RNX_TOKEN").empty();
    if (!is_outage(e, store.embedded) && !fork_without_token) throw;
    const std::string where = store.backend    ? "the " + store.backend->describe()
                              : store.embedded ? "the embedded store"
                                               : std::string("the baseline service");
    if (plan.paired) {
      store.note = "the run was not stored for history: " + where + " failed (" + e.what() + ")";
    } else {
      store.verdict = warn_verdict(
          fork_without_token ? "this pull request comes from a fork, which gets no RNX_TOKEN secret, so " + where +
                                   " refused the run and it was not judged"
                             : where + " is unavailable, so this run was not judged: " + std::string(e.what()),
          plan.policy.policy, head);
    }
  }
  report_facts facts = job_facts(plan, plan.reported_mode(), head, store);
  return {std::move(runs), std::move(store), std::move(facts)};
}

judged_job judge_group(const gate_plan& plan) {
  const std::string group = resolve_run_group(plan.flags.sharding, "--group-verdict");
  if (plan.project.empty()) {
    throw error(errc::usage,
                "--group-verdict: no project: set [project] name in " + plan.flags.config + " or pass --project NAME");
  }
  measured_runs runs;
  runs.head.project = plan.project;
  runs.head.commit = plan.ctx.commit;
  runs.head.branch = plan.ctx.branch;
  runs.head.base_branch = plan.ctx.base_branch;
  runs.pair_ref = plan.pair_ref;
  std::error_code ec;
  std::filesystem::create_directories(plan.out_dir, ec);
  if (ec) throw error(errc::usage, "cannot create --out-dir " + plan.flags.out_dir + ": " + ec.message());
  store_answer store;
  store.embedded = embedded_store(plan);
  try {
    store.backend = open_backend(plan.flags.backend, plan.manifest_ptr()).backend;
    store.verdict =
        await_group_verdict(*store.backend, plan.project, group, plan.policy.policy, plan.flags.sharding.group_wait_s);
    if (!store.verdict.head_run_id.empty()) store.upload = uploaded_run{store.verdict.head_run_id, false, false};
  } catch (const error& e) {
    if (!is_outage(e, store.embedded)) throw;
    const std::string where = store.backend ? "the " + store.backend->describe() : std::string("the baseline store");
    store.verdict = warn_verdict(where + " is unavailable, so run group " + group + " was not judged: " + e.what(),
                                 plan.policy.policy, runs.head);
  }
  report_facts facts = job_facts(plan, gate_mode::stored, runs.head, store);
  return {std::move(runs), std::move(store), std::move(facts)};
}

std::string offer_accept(const gate_plan& plan, const store_answer& store, const std::string& run_id) {
  // A paired verdict is against the base revision itself, which no accepted baseline changes.
  if (!is_pull_request_run(plan.ctx) || plan.paired) return {};
  const std::string location = store.embedded
                                   ? (plan.flags.backend.store.empty() ? ".rnx/baselines.db" : plan.flags.backend.store)
                                   : resolve_service_url(plan.flags.backend, plan.manifest_ptr()).url;
  return accept_hint({plan.ctx.event == event_kind::pull_request, store.embedded, location, run_id});
}

verdict_document judge_paired(const gate_plan& plan, const measured_runs& runs, const std::string& head_run_id) {
  verdict_document verdict = stats::judge_runs(*runs.base, runs.head, plan.policy.policy);
  verdict.baseline = baseline_ref{"paired:" + (runs.pair_ref.empty() ? plan.flags.base_results : runs.pair_ref),
                                  runs.base->commit, runs.base->created_at};
  verdict.head_run_id = head_run_id;
  return verdict;
}

revised_verdict store_paired(const gate_plan& plan, const judged_job& job, verdict_document verdict) {
  if (!job.store.upload || !job.store.backend || !job.runs.base) return {std::move(verdict), {}};
  auto stored = store_paired_verdict(*job.store.backend, *job.runs.base, job.store.upload->id, job.runs.head,
                                     plan.policy.policy, verdict);
  return {std::move(verdict), std::move(stored.note)};
}

revised_verdict check_drift_budget(const gate_plan& plan, const judged_job& job, verdict_document verdict,
                                   measure_beside_anchor measure_paired) {
  if (!is_pull_request_run(plan.ctx) || !job.store.backend) return {std::move(verdict), {}};
  std::string report = gate_drift_check(
      verdict, *job.store.backend, job.runs.head,
      {plan.flags.config, plan.out_dir, job.runs.head.base_branch, job.facts.run_id, std::move(measure_paired)},
      plan.policy.policy);
  return {std::move(verdict), std::move(report)};
}

verdict_document note_new_baseline(const gate_plan& plan, const judged_job& job, verdict_document verdict) {
  const auto& upload = job.store.upload;
  const run_document& head = job.runs.head;
  if (!upload || !upload->baseline || plan.paired) return verdict;
  if (verdict.baseline) {
    verdict.reason =
        "stored as the newest baseline of " + head.branch + "; against the previous one: " + verdict.reason;
    return verdict;
  }
  // The first baseline of a branch is the start of its history, not a warning: PASS, with its note, unless a
  // configuration is broken (a failing kernel is never passed by).
  const bool only_new = std::all_of(verdict.configs.begin(), verdict.configs.end(), [](const config_verdict& c) {
    return c.result == decision::new_config || c.result == decision::abstain;
  });
  if (only_new && verdict.verdict == overall::warn) verdict.verdict = overall::pass;
  verdict.reason = "first baseline: nothing to compare; stored as the first baseline of " + head.branch +
                   " in environment " + head.env.env_id;
  for (auto& c : verdict.configs) {
    if (c.result != decision::new_config) continue;
    const std::string unstable =
        c.head_unstable ? c.reason.substr(std::min(c.reason.find("; measured unstable"), c.reason.size())) : "";
    c.reason = "first baseline: nothing earlier to compare with" + unstable;
  }
  return verdict;
}

run_history recent_history(const gate_plan& plan, const judged_job& job) {
  run_history found;
  if (!job.store.upload || !job.store.backend) return found;
  if (!job.store.embedded) {
    std::string url = resolve_service_url(plan.flags.backend, plan.manifest_ptr()).url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    found.run_url = url + "/runs/" + job.store.upload->id;
  }
  try {
    // The base branch's baselines only (not pull requests' paired base runs, not other branches' runs), each
    // drawn by the statistic the verdict compares, so the newest point is the number the table compared with.
    const run_document& head = job.runs.head;
    const std::string branch = head.base_branch.empty() ? head.branch : head.base_branch;
    constexpr int points = 20;
    std::set<std::string> baselines;
    for (const auto& ref : job.store.backend->baseline_history(head.project, branch, head.env.env_id, points)) {
      baselines.insert(ref.id);
    }
    std::map<config_key, std::vector<double>> recent;
    for (auto& h : job.store.backend->recent_numbers(head.project, head.env.env_id, 10 * points)) {
      auto& values = recent[h.key];
      for (const auto& [run_id, ms] : h.points) {
        if (baselines.count(run_id)) values.push_back(ms);
      }
    }
    for (const auto& r : head.results) {
      auto it = recent.find(r.key());
      if (it != recent.end() && it->second.size() >= 2) found.history.emplace_back(r.key().label(), it->second);
    }
  } catch (const error& e) {
    std::cout << "rnx gate: no recent history for the sparklines: " << terminal_safe(e.what()) << "\n";
  }
  return found;
}

}  // namespace rnx::gate
