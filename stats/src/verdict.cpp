// Whole-run verdicts: pairs configurations of two runs and applies the gate policy of docs/statistics.md.
#include "rnx/stats/verdict.hpp"

#include "rnx/stats/posterior.hpp"

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <thread>
#include <iomanip>
#include <sstream>
#include <string_view>

namespace rnx::stats {

namespace {

// The pairing of two runs, or nullopt when they are not the two sides of one paired run.
std::optional<pairing_info> paired_runs(const run_document& base, const run_document& head) {
  if (!base.pairing || !head.pairing || base.pairing->id != head.pairing->id) return std::nullopt;
  return head.pairing;
}

bool in_process(const run_result& base, const run_result& head, const std::optional<pairing_info>& pairing) {
  return pairing && base.pairing == pairing_mode::in_process && head.pairing == pairing_mode::in_process &&
         base.groups == head.groups;
}

// Why an imported result that kept only a harness's summaries cannot be judged ("" when it has samples).
std::string aggregates_only(const run_result& r, std::string_view side) {
  if (!r.aggregates) return "";
  std::ostringstream os;
  os << side << " has only aggregates";
  if (r.aggregates->median_ms || r.aggregates->mean_ms) {
    os << " (" << (r.aggregates->median_ms ? "median " : "mean ") << std::setprecision(4)
       << (r.aggregates->median_ms ? *r.aggregates->median_ms : *r.aggregates->mean_ms) << " ms";
    os << " of " << r.aggregates->count << ")";
  }
  return os.str();
}

// Why a side's median time is beyond what its device can do (it returns output it did not write), or empty.
std::string physics_problem(const run_result& r, const std::optional<double>& median_ms, std::string_view side) {
  if (!r.bound || !median_ms || !beyond_physics(*r.bound, *median_ms)) return "";
  return std::string(side) + " beyond the physical limit: " + physics_text(*r.bound, *median_ms);
}

// A time beyond physics on either side is no evidence of a change: the verdict cannot be faster or slower.
void refuse_beyond_physics(config_verdict& v, const run_result& base, const run_result& head) {
  std::string why = physics_problem(head, v.head_ms, "head");
  const std::string base_why = physics_problem(base, v.base_ms, "baseline");
  why += (why.empty() || base_why.empty() ? "" : "; ") + base_why;
  if (why.empty()) return;
  v.beyond_physics = true;
  if (v.result == decision::faster || v.result == decision::slower) v.result = decision::abstain;
  v.reason = why + (v.reason.empty() ? "" : "; " + v.reason);
}

config_verdict compare_results(const run_result& base, const run_result& head, const gate_policy& policy,
                               const std::optional<pairing_info>& pairing) {
  config_verdict v;
  v.key = head.key();
  v.n_base = static_cast<std::int64_t>(base.samples_ms.size());
  v.n_head = static_cast<std::int64_t>(head.samples_ms.size());
  v.base_unstable = base.unstable;
  v.head_unstable = head.unstable;
  const bool base_ok = base.status == result_status::ok;
  const bool head_ok = head.status == result_status::ok;
  if (base_ok && (head.status == result_status::diverged || head.status == result_status::error)) {
    v.result = decision::broken;
    v.reason = std::string(to_string(head.status)) + " in head, ok in baseline: " + head.message;
    return v;
  }
  if (base.status == result_status::skipped && head.status == result_status::skipped) {
    v.result = decision::abstain;
    v.reason = "skipped on both sides: " + head.message;
    return v;
  }
  if (base_ok && head.status == result_status::skipped) {
    v.result = decision::missing;
    v.reason = "skipped in head: " + head.message;
    return v;
  }
  if (!base_ok && head_ok) {
    v.result = decision::new_config;
    v.reason = std::string(to_string(base.status)) + " in baseline (" + base.message + "), ok in head";
    return v;
  }
  if (!base_ok && (head.status == result_status::diverged || head.status == result_status::error)) {
    // Failing before as well does not make a failing kernel fine: the gate's answer must not pass it by.
    v.result = decision::broken;
    v.reason = std::string(to_string(head.status)) + " in head, and " + std::string(to_string(base.status)) +
               " in the baseline already: " + head.message;
    return v;
  }
  if (!base_ok && !head_ok) {
    v.result = decision::abstain;
    v.reason = "not ok on either side: baseline " + std::string(to_string(base.status)) + ", head " +
               std::string(to_string(head.status)) + ": " + head.message;
    return v;
  }
  if (base.aggregates || head.aggregates) {
    // A mean and a spread say nothing about the shape of the samples, and the posterior is over samples.
    std::string why = aggregates_only(base, "baseline");
    const std::string head_why = aggregates_only(head, "head");
    why += (why.empty() || head_why.empty() ? "" : "; ") + head_why;
    v.result = decision::abstain;
    v.reason = why +
               ": the harness kept no per-sample times, so no posterior can be formed; import its per-sample "
               "output instead (docs/import.md)";
    return v;
  }
  comparison c = compare_measured(base, head, policy, pairing);
  if (pairing) v.pairing = in_process(base, head, pairing) ? pairing_mode::in_process : pairing_mode::process;
  if (v.pairing == pairing_mode::process && !head.pairing_reason.empty()) {
    c.reason += std::string(c.reason.empty() ? "" : "; ") + "paired by process: " + head.pairing_reason;
  }
  if (v.pairing == pairing_mode::in_process && head.base_control && !head.base_control->steered) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(3) << "base checked beside its twin: beside the head it ran "
       << head.base_control->ratio << "x its time beside its twin (limit 1 + " << std::setprecision(2)
       << head.base_control->limit << ")";
    c.reason += std::string(c.reason.empty() ? "" : "; ") + os.str();
  }
  v.mde = c.mde;
  if (pairing && pairing->looks > 1) v.threshold = c.threshold;
  v.result = c.result;
  v.ratio = c.ratio;
  v.ci_lo = c.ci_lo;
  v.ci_hi = c.ci_hi;
  v.p_faster = c.p_faster;
  v.p_slower = c.p_slower;
  v.p_equivalent = c.p_equivalent;
  v.base_ms = c.base_stat;
  v.head_ms = c.head_stat;
  v.reason = c.reason;
  refuse_beyond_physics(v, base, head);
  return v;
}

bool counts_for_overall(const config_verdict& v) {
  // A runtime skipped on both sides (not installed here) says nothing about the change.
  return !(v.result == decision::abstain && v.reason.rfind("skipped on both sides", 0) == 0);
}

// The harness that measured imported results (their runtime names it: both sides share it, being one
// configuration), else unset: rnx bench.
std::optional<runtime_kind> measured_by(const run_result& head) {
  const auto runtime = runtime_kind_from_string(head.runtime);
  if (runtime == runtime_kind::gbench || runtime == runtime_kind::pytest_benchmark ||
      runtime == runtime_kind::nvbench) {
    return runtime;
  }
  return std::nullopt;
}

}  // namespace

comparison compare_measured(const run_result& base, const run_result& head, const gate_policy& policy,
                            const std::optional<pairing_info>& pairing, int look) {
  comparison_options opt{policy.rope,      policy.probability, policy.min_samples,
                         policy.resamples, policy.stat,        pairing ? static_cast<int>(pairing->looks) : 1};
  opt.look = look;
  opt.harness = measured_by(head);
  opt.paired_by_process = pairing.has_value() && !in_process(base, head, pairing);
  if (in_process(base, head, pairing)) {
    // The two load orders as the arms of the level over processes (where the run recorded them).
    std::vector<int> arms;
    for (pair_side first : head.first_sides) arms.push_back(first == pair_side::head ? 1 : 0);
    return compare_paired({base.samples_ms, head.samples_ms, head.groups, pairing->block, arms}, opt);
  }
  return compare_samples({base.samples_ms, base.groups, base.unstable, base.message},
                         {head.samples_ms, head.groups, head.unstable, head.message}, opt);
}

overall overall_answer(const std::vector<config_verdict>& configs, const gate_policy& policy, std::string& reason) {
  std::map<decision, std::vector<const config_verdict*>> by;
  for (const auto& c : configs) {
    if (counts_for_overall(c)) by[c.result].push_back(&c);
  }
  auto list = [&](decision d) {
    std::ostringstream os;
    const auto& items = by[d];
    os << items.size() << " " << to_string(d) << " (";
    for (std::size_t i = 0; i < items.size() && i < 3; ++i) {
      if (i) os << ", ";
      os << items[i]->key.label();
      if (items[i]->ratio) os << " x" << std::fixed << std::setprecision(3) << *items[i]->ratio;
    }
    if (items.size() > 3) os << ", ...";
    os << ")";
    return os.str();
  };
  overall answer = overall::pass;
  std::vector<std::string> why;
  if (!by[decision::slower].empty() || !by[decision::broken].empty()) {
    answer = overall::block;
    if (!by[decision::slower].empty()) why.push_back(list(decision::slower));
    if (!by[decision::broken].empty()) why.push_back(list(decision::broken));
  }
  if (!by[decision::abstain].empty()) {
    if (policy.on_abstain == overall::block) answer = overall::block;
    if (policy.on_abstain == overall::warn && answer == overall::pass) answer = overall::warn;
    why.push_back(list(decision::abstain) + " -> on_abstain " + std::string(to_string(policy.on_abstain)));
  }
  for (decision d : {decision::new_config, decision::missing}) {
    if (!by[d].empty()) {
      if (answer == overall::pass) answer = overall::warn;
      why.push_back(list(d));
    }
  }
  if (answer == overall::block && policy.report_only) {
    answer = overall::warn;
    why.push_back("report_only turns BLOCK into WARN");
  }
  if (why.empty()) {
    std::ostringstream os;
    os << configs.size() << " configurations: " << by[decision::equivalent].size() << " equivalent, "
       << by[decision::faster].size() << " faster";
    why.push_back(os.str());
  }
  reason.clear();
  for (std::size_t i = 0; i < why.size(); ++i) reason += (i ? "; " : "") + why[i];
  return answer;
}

verdict_document judge_runs(const run_document& base, const run_document& head, const gate_policy& policy,
                            unsigned threads) {
  verdict_document doc;
  doc.policy = policy;
  doc.env_id = head.env.env_id;
  std::map<config_key, const run_result*> base_by_key;
  for (const auto& r : base.results) base_by_key[r.key()] = &r;
  std::map<config_key, bool> seen;
  std::vector<std::pair<std::size_t, std::pair<const run_result*, const run_result*>>> to_compare;
  const std::optional<pairing_info> pairing = paired_runs(base, head);
  for (const auto& h : head.results) {
    seen[h.key()] = true;
    auto it = base_by_key.find(h.key());
    if (it == base_by_key.end()) {
      config_verdict v;
      v.key = h.key();
      v.n_head = static_cast<std::int64_t>(h.samples_ms.size());
      if (h.status == result_status::error || h.status == result_status::diverged) {
        // A kernel that is new and already fails is broken, not merely new: its error must not hide.
        v.result = decision::broken;
        v.reason = "new in this run and " + std::string(to_string(h.status)) + ": " + h.message;
      } else {
        v.result = h.status == result_status::skipped ? decision::abstain : decision::new_config;
        v.reason =
            h.status == result_status::skipped ? "skipped on both sides: " + h.message : "not in the baseline run";
        v.head_unstable = h.unstable;
        // The statistic a verdict would compare, as every table shows it (the service's first verdict does too).
        if (h.status == result_status::ok) v.head_ms = observed_statistic({h.samples_ms, h.groups}, policy.stat);
        if (h.unstable) v.reason += "; measured unstable: " + unstable_line(h.message);
      }
      doc.configs.push_back(std::move(v));
      continue;
    }
    to_compare.push_back({doc.configs.size(), {it->second, &h}});
    doc.configs.emplace_back();
  }
  // Each comparison is seeded by its own data, so spreading them over threads changes no result.
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(threads, (to_compare.size() + 7) / 8);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i = next++; i < to_compare.size(); i = next++) {
      const auto& [slot, sides] = to_compare[i];
      doc.configs[slot] = compare_results(*sides.first, *sides.second, policy, pairing);
    }
  };
  std::vector<std::thread> helpers;
  for (std::size_t t = 1; t < workers; ++t) helpers.emplace_back(work);
  work();
  for (auto& t : helpers) t.join();
  for (const auto& b : base.results) {
    if (seen.count(b.key())) continue;
    config_verdict v;
    v.key = b.key();
    v.result = decision::missing;
    v.n_base = static_cast<std::int64_t>(b.samples_ms.size());
    v.reason = "in the baseline run, not in head";
    doc.configs.push_back(std::move(v));
  }
  doc.verdict = overall_answer(doc.configs, policy, doc.reason);
  if (base.env.env_id != head.env.env_id) {
    // Timings from different machines or software stacks are not evidence of a change.
    if (doc.verdict == overall::block) doc.verdict = overall::warn;
    if (doc.verdict == overall::pass) doc.verdict = overall::warn;
    doc.reason = "environments differ (base " + base.env.env_id + ", head " + head.env.env_id +
                 "): timings are not comparable; " + doc.reason;
  }
  return doc;
}

}  // namespace rnx::stats
