// The JSON behind each page: overview, configuration history (downsampled), run evidence and comparison.
#include "rnx/service/pages.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace rnx::pages {

namespace {

constexpr int overview_baselines = 60;  // newest baseline records read: two per environment for up to 30
constexpr int overview_runs = 60;       // newest runs whose medians make the overview's sparklines
constexpr int overview_verdicts = 8;
constexpr std::size_t samples_per_process = 100;  // strip charts show at most this many quantiles per process

bj::value opt(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }
bj::value opt(const std::optional<std::int64_t>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

bj::object key_json(const config_key& k) {
  return {{"config", k.label()}, {"kernel", k.kernel}, {"runtime", k.runtime}, {"dtype", k.dtype}, {"batch", k.batch}};
}

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  return stats::median(std::move(v));
}

// Evenly spaced order statistics of one process's samples: the strip chart keeps its shape at any sample count.
bj::array thinned(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  bj::array out;
  if (samples.size() <= samples_per_process) {
    for (double s : samples) out.push_back(s);
    return out;
  }
  for (std::size_t i = 0; i < samples_per_process; ++i) {
    out.push_back(samples[i * (samples.size() - 1) / (samples_per_process - 1)]);
  }
  return out;
}

bj::object side_json(const run_result& r) {
  bj::array processes;
  std::size_t at = 0;
  std::vector<std::int64_t> groups = r.groups;
  if (groups.empty()) groups.push_back(static_cast<std::int64_t>(r.samples_ms.size()));
  for (auto g : groups) {
    auto end = std::min(r.samples_ms.size(), at + static_cast<std::size_t>(std::max<std::int64_t>(g, 0)));
    processes.push_back(thinned(std::vector<double>(r.samples_ms.begin() + static_cast<std::ptrdiff_t>(at),
                                                    r.samples_ms.begin() + static_cast<std::ptrdiff_t>(end))));
    at = end;
  }
  return {{"status", to_string(r.status)},
          {"message", r.message},
          {"unstable", r.unstable},
          {"median_ms", opt(median(r.samples_ms))},
          {"n", static_cast<std::int64_t>(r.samples_ms.size())},
          {"processes", std::move(processes)}};
}

bj::object run_summary_json(const store::run_summary& s) {
  return {{"id", std::to_string(s.id)},
          {"commit", s.commit},
          {"branch", s.branch},
          {"base_branch", s.base_branch},
          {"pull_request", opt(s.pull_request)},
          {"env_id", s.env_id},
          {"created_at", s.created_at},
          {"baseline", s.baseline}};
}

bj::object environment_json(const environment& e) {
  return {{"env_id", e.env_id}, {"device", e.device}, {"cpu", e.cpu},       {"threads", e.threads},
          {"torch", e.torch},   {"cuda", e.cuda},     {"driver", e.driver}, {"os", e.os}};
}

// The band of practical equivalence the project's gate uses: the newest stored verdict's rope, else the default.
double project_rope(store::database& db, std::int64_t project_id) {
  for (const auto& row : db.recent_verdicts(project_id, 1)) {
    try {
      return verdict_from_json(json::parse(row.document, "stored verdict"), "stored verdict").policy.rope;
    } catch (const error&) {
      break;  // a verdict of an older schema: the default band
    }
  }
  return gate_policy{}.rope;
}

// A median with its 95% interval; empty when any part is missing or not positive.
struct interval_median {
  double median = 0;
  double lo = 0;
  double hi = 0;
};
std::optional<interval_median> with_interval(std::optional<double> m, std::optional<double> lo,
                                             std::optional<double> hi) {
  if (!m || !lo || !hi || !(*m > 0) || !(*lo > 0) || !(*hi >= *lo)) return std::nullopt;
  return interval_median{*m, *lo, *hi};
}

// The ratio a/b of two medians with an approximate 95% interval: the two medians' intervals (order statistics)
// combined in log space, each side's distance from its median added in quadrature.
bj::object ratio_json(const interval_median& a, const interval_median& b) {
  double r = a.median / b.median;
  double down = std::hypot(std::log(a.median / a.lo), std::log(b.hi / b.median));
  double up = std::hypot(std::log(a.hi / a.median), std::log(b.median / b.lo));
  return {{"ratio", r}, {"lo", r * std::exp(-down)}, {"hi", r * std::exp(up)}};
}

// What a stored verdict says overall, as the page shows it. A run stored as the first baseline of its branch was
// judged before it became one ("no baseline yet ... make run N the baseline"): the page says what it is instead,
// as the gate's terminal did.
std::string shown_reason(const verdict_document& v, const std::optional<store::baseline_record>& record,
                         const store::run_summary& run) {
  if (v.baseline || !record) return v.reason;
  bool all_new = std::all_of(v.configs.begin(), v.configs.end(),
                             [](const config_verdict& c) { return c.result == decision::new_config; });
  if (!all_new) return v.reason;
  if (record->source == baseline_kind::accepted) {
    return "accepted as the baseline of " + record->branch + " in environment " + run.env_id +
           "; there was no earlier baseline to compare it with";
  }
  return "stored as the first baseline of " + record->branch + " in environment " + run.env_id +
         "; there is nothing earlier to compare it with";
}

// Whether an accepted run was accepted as slower in this configuration: its stored verdict called it slower, or,
// without one, its median lies above the band around the baseline it replaced. An accept moves the baseline of
// every configuration of the run; only the slower ones are the slowdown someone accepted.
bool accepted_as_slower(store::database& db, const store::config_point& p, const config_key& key,
                        std::optional<double> replaced, double rope) {
  if (auto row = db.verdict_of_run(p.run_id)) {
    try {
      auto v = verdict_from_json(json::parse(row->document, "stored verdict"), "stored verdict");
      for (const auto& c : v.configs) {
        if (c.key == key) return c.result == decision::slower;
      }
    } catch (const error&) {
      // a verdict of an older schema: judged by the medians below
    }
  }
  return replaced && p.median_ms && *replaced > 0 && *p.median_ms / *replaced > 1 + rope;
}

store::run_summary summary_of(const run_document& d) {
  store::run_summary s;
  s.project = d.project;
  s.commit = d.commit;
  s.branch = d.branch;
  s.base_branch = d.base_branch;
  s.pull_request = d.pull_request;
  s.env_id = d.env.env_id;
  s.created_at = d.created_at;
  return s;
}

}  // namespace

std::vector<std::size_t> downsample(const std::vector<double>& medians, const std::vector<bool>& keep,
                                    std::size_t target) {
  const std::size_t n = medians.size();
  std::vector<std::size_t> out;
  if (n <= target || target < 4) {
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  std::set<std::size_t> chosen{0, n - 1};
  for (std::size_t i = 0; i < n; ++i) {
    if (keep[i]) chosen.insert(i);
  }
  // Each bucket gives its lowest and its highest point, so spikes and dips survive the thinning.
  const std::size_t buckets = std::max<std::size_t>(1, (target - std::min(target - 2, chosen.size())) / 2);
  for (std::size_t b = 0; b < buckets; ++b) {
    std::size_t lo = b * n / buckets;
    std::size_t hi = (b + 1) * n / buckets;
    if (lo >= hi) continue;
    std::size_t min_i = lo;
    std::size_t max_i = lo;
    for (std::size_t i = lo; i < hi; ++i) {
      if (medians[i] < medians[min_i]) min_i = i;
      if (medians[i] > medians[max_i]) max_i = i;
    }
    chosen.insert(min_i);
    chosen.insert(max_i);
  }
  return {chosen.begin(), chosen.end()};
}

bj::object overview_data(store::database& db, const store::project_info& project) {
  const double rope = project_rope(db, project.id);
  bj::array envs;
  for (const auto& e : db.environments(project.id)) {
    envs.push_back(bj::object{{"env_id", e.env_id},
                              {"device", e.device},
                              {"cpu", e.cpu},
                              {"n_runs", e.n_runs},
                              {"last_run_at", e.last_run_at},
                              {"newest_run_id", std::to_string(e.newest_run_id)}});
  }

  struct series_state {
    std::vector<store::baseline_result> baselines;  // newest first, at most two kept
    std::vector<double> recent;
  };
  std::map<config_key, std::map<std::string, series_state>> configs;
  for (auto& b : db.recent_baseline_results(project.id, overview_baselines)) {
    auto& s = configs[b.key][b.env_id];
    if (s.baselines.size() < 2) s.baselines.push_back(std::move(b));
  }
  for (const auto& [key, point] : db.recent_results(project.id, overview_runs)) {
    auto& s = configs[key][point.env_id];
    if (point.median_ms) s.recent.push_back(*point.median_ms);
  }

  // The newest verdicts, and per configuration and environment its decision in each of them.
  bj::array verdicts;
  std::map<std::pair<config_key, std::string>, bj::array> decisions;  // per configuration and environment
  std::map<config_key, bj::array> all_decisions;                      // per configuration, every environment
  for (const auto& row : db.recent_verdicts(project.id, overview_verdicts)) {
    verdict_document v;
    try {
      v = verdict_from_json(json::parse(row.document, "stored verdict"), "stored verdict");
    } catch (const error&) {
      continue;  // a verdict from an older schema: the run page still shows its run
    }
    std::map<std::string, std::int64_t> counts;
    for (const auto& c : v.configs) {
      ++counts[std::string(to_string(c.result))];
      bj::object d{{"run_id", std::to_string(row.run_id)},
                   {"env_id", row.run.env_id},
                   {"decision", to_string(c.result)},
                   {"ratio", opt(c.ratio)},
                   {"change", change_text(c.ratio, c.ci_lo, c.ci_hi)}};
      all_decisions[c.key].push_back(d);
      decisions[{c.key, row.run.env_id}].push_back(std::move(d));
    }
    bj::object count_json;
    for (const auto& [d, n] : counts) count_json[d] = n;
    // The gate's paired comparison: stored as its own kind, or named by the base revision it measured.
    bool paired = row.kind == store::verdict_kind::paired || (v.baseline && v.baseline->id.rfind("paired:", 0) == 0);
    verdicts.push_back(bj::object{{"run_id", std::to_string(row.run_id)},
                                  {"verdict", to_string(v.verdict)},
                                  {"reason", shown_reason(v, db.baseline_of_run(row.run_id), row.run)},
                                  {"paired", paired},
                                  {"branch", row.run.branch},
                                  {"commit", row.run.commit},
                                  {"pull_request", opt(row.run.pull_request)},
                                  {"env_id", row.run.env_id},
                                  {"created_at", row.created_at},
                                  {"counts", std::move(count_json)}});
  }

  bj::array config_list;
  for (auto& [key, by_env] : configs) {
    bj::array series;
    for (auto& [env_id, s] : by_env) {
      bj::value baseline = nullptr;
      bj::value trend = nullptr;
      bj::value trend_ratio = nullptr;
      bj::value change = nullptr;
      if (!s.baselines.empty()) {
        const auto& b = s.baselines.front();
        baseline = bj::object{{"run_id", std::to_string(b.run_id)},
                              {"source", to_string(b.source)},
                              {"created_at", b.created_at},
                              {"median_ms", opt(b.median_ms)}};
        if (s.baselines.size() > 1 && b.median_ms && s.baselines[1].median_ms && *s.baselines[1].median_ms > 0) {
          const auto& previous = s.baselines[1];
          double ratio = *b.median_ms / *previous.median_ms;
          trend_ratio = ratio;
          trend = to_string(ratio > 1 + rope   ? trend_kind::slower
                            : ratio < 1 - rope ? trend_kind::faster
                                               : trend_kind::flat);
          auto newer = with_interval(b.median_ms, b.lo_ms, b.hi_ms);
          auto older = with_interval(previous.median_ms, previous.lo_ms, previous.hi_ms);
          if (newer && older) {
            change = ratio_json(*newer, *older);
          } else {
            change = bj::object{{"ratio", ratio}, {"lo", nullptr}, {"hi", nullptr}};
          }
        }
      }
      bj::array recent;
      for (double m : s.recent) recent.push_back(m);
      auto d = decisions.find({key, env_id});
      series.push_back(bj::object{{"env_id", env_id},
                                  {"baseline", std::move(baseline)},
                                  {"trend", std::move(trend)},
                                  {"trend_ratio", std::move(trend_ratio)},
                                  {"change", std::move(change)},
                                  {"recent", std::move(recent)},
                                  {"verdicts", d == decisions.end() ? bj::array{} : std::move(d->second)}});
    }
    bj::object c = key_json(key);
    c["series"] = std::move(series);
    c["verdicts"] = all_decisions.count(key) ? std::move(all_decisions[key]) : bj::array{};
    config_list.push_back(std::move(c));
  }
  return {{"project", project.name},         {"public", project.is_public},       {"rope", rope},
          {"environments", std::move(envs)}, {"configs", std::move(config_list)}, {"verdicts", std::move(verdicts)}};
}

namespace {

// The change points of one configuration in the history's range, as chart markers (docs/drift.md).
bj::array change_markers(store::database& db, const store::project_info& project, const config_key& key,
                         const history_query& q) {
  store::change_filter filter;
  filter.config = key;
  filter.env_id = q.env_id;
  filter.limit = 1000;
  bj::array out;
  for (const auto& c : db.change_points(project.id, filter)) {
    if ((q.from && c.created_at < *q.from) || (q.to && c.created_at >= *q.to)) continue;
    out.push_back(bj::object{{"run_id", std::to_string(c.run_id)},
                             {"env_id", c.env_id},
                             {"branch", c.branch},
                             {"t", c.created_at},
                             {"commit", c.commit},
                             {"before_commit", c.before_commit},
                             {"ratio", c.ratio},
                             {"ci95", bj::array{c.ci_lo, c.ci_hi}},
                             {"probability", c.probability},
                             {"direction", c.ratio > 1 ? "slower" : "faster"}});
  }
  return out;
}

}  // namespace

bj::object history_data(store::database& db, const store::project_info& project, const config_key& key,
                        const history_query& q) {
  validate(q);
  auto envs = db.environments(project.id);
  if (q.env_id) {
    bool known = std::any_of(envs.begin(), envs.end(), [&](const auto& e) { return e.env_id == *q.env_id; });
    if (!known) {
      throw error(errc::not_found, "environment \"" + q.env_id->substr(0, 80) + "\" has no runs in project " +
                                       project.name + "; pick one from the project's overview");
    }
  }
  auto points = db.config_history(project.id, key, store::config_range{q.env_id, q.from, q.to});
  if (points.empty() && !q.from && !q.to) {
    throw error(errc::not_found, "configuration \"" + key.label() + "\" has no runs in project " + project.name +
                                     (q.env_id ? " in that environment" : "") +
                                     "; the overview lists the configurations");
  }
  const double rope = project_rope(db, project.id);
  bj::array series;
  bj::array accepted;
  for (std::size_t begin = 0; begin < points.size();) {
    std::size_t end = begin;
    while (end < points.size() && points[end].env_id == points[begin].env_id) ++end;
    std::vector<double> medians;
    std::vector<bool> keep;
    std::vector<std::size_t> rows;
    std::set<std::int64_t> slower_accepts;
    bj::array steps;  // the baseline in force from each baseline run on: every one, never thinned
    std::optional<double> in_force;
    for (std::size_t i = begin; i < end; ++i) {
      const auto& p = points[i];
      if (!p.median_ms) continue;  // an errored or skipped run has no time to draw
      if (p.baseline_source == baseline_kind::accepted && accepted_as_slower(db, p, key, in_force, rope)) {
        slower_accepts.insert(p.run_id);
      }
      if (p.baseline_source != baseline_kind::unknown) {
        in_force = p.median_ms;
        steps.push_back(
            bj::object{{"run_id", std::to_string(p.run_id)}, {"t", p.created_at}, {"median_ms", *p.median_ms}});
      }
      medians.push_back(*p.median_ms);
      keep.push_back(slower_accepts.count(p.run_id) > 0);
      rows.push_back(i);
    }
    bj::array drawn;
    for (auto k : downsample(medians, keep, static_cast<std::size_t>(q.points))) {
      const auto& p = points[rows[k]];
      const bool slower_accept = slower_accepts.count(p.run_id) > 0;
      drawn.push_back(bj::object{
          {"run_id", std::to_string(p.run_id)},
          {"t", p.created_at},
          {"median_ms", opt(p.median_ms)},
          {"lo_ms", opt(p.lo_ms)},
          {"hi_ms", opt(p.hi_ms)},
          {"n", p.n},
          {"baseline",
           p.baseline_source == baseline_kind::unknown ? bj::value(nullptr) : bj::value(to_string(p.baseline_source))},
          {"accepted_slowdown", slower_accept},
          {"branch", p.branch},
          {"commit", p.commit},
          {"pull_request", opt(p.pull_request)}});
      if (slower_accept) {
        auto record = db.baseline_of_run(p.run_id);
        accepted.push_back(bj::object{{"run_id", std::to_string(p.run_id)},
                                      {"env_id", p.env_id},
                                      {"t", p.created_at},
                                      {"accepted_by", record ? record->accepted_by : ""},
                                      {"reason", record ? record->reason : ""}});
      }
    }
    std::string device;
    std::int64_t colour = 0;
    for (std::size_t e = 0; e < envs.size(); ++e) {
      if (envs[e].env_id != points[begin].env_id) continue;
      device = envs[e].device;
      colour = static_cast<std::int64_t>(e);  // the project's environment order: the same with any filter
    }
    series.push_back(bj::object{{"env_id", points[begin].env_id},
                                {"device", device},
                                {"colour", colour},
                                {"n_total", static_cast<std::int64_t>(end - begin)},
                                {"n_shown", static_cast<std::int64_t>(drawn.size())},
                                {"points", std::move(drawn)},
                                {"baseline_steps", std::move(steps)}});
    begin = end;
  }
  bj::object out = key_json(key);
  out["project"] = project.name;
  out["public"] = project.is_public;
  out["range"] = bj::object{{"env_id", q.env_id ? bj::value(*q.env_id) : bj::value(nullptr)},
                            {"from", q.from ? bj::value(*q.from) : bj::value(nullptr)},
                            {"to", q.to ? bj::value(*q.to) : bj::value(nullptr)},
                            {"points", q.points}};
  out["rope"] = rope;
  out["series"] = std::move(series);
  out["accepted"] = std::move(accepted);
  // Events drawn as vertical lines across the chart ({"t", "env_id", "label", "run_id"}); none are computed here.
  out["markers"] = bj::array{};
  // The configuration's change points (docs/drift.md), drawn as their own markers with a table below the chart.
  out["changes"] = change_markers(db, project, key, q);
  return out;
}

bj::object run_data(const run_document& head, const std::string& head_id, const run_document* base,
                    const std::string& base_id, const verdict_document* verdict) {
  std::map<config_key, const run_result*> base_results;
  if (base) {
    for (const auto& r : base->results) base_results[r.key()] = &r;
  }
  std::map<config_key, const config_verdict*> judged;
  if (verdict) {
    for (const auto& c : verdict->configs) judged[c.key] = &c;
  }
  bj::array configs;
  std::set<config_key> seen;
  auto add = [&](const config_key& key, const run_result* head_result) {
    seen.insert(key);
    bj::object c = key_json(key);
    auto it = judged.find(key);
    const config_verdict* v = it == judged.end() ? nullptr : it->second;
    c["decision"] = v ? bj::value(to_string(v->result)) : bj::value(nullptr);
    c["ratio"] = v ? opt(v->ratio) : bj::value(nullptr);
    c["ci95"] = v && v->ci_lo && v->ci_hi ? bj::value(bj::array{*v->ci_lo, *v->ci_hi}) : bj::value(nullptr);
    c["p_faster"] = v ? opt(v->p_faster) : bj::value(nullptr);
    c["p_slower"] = v ? opt(v->p_slower) : bj::value(nullptr);
    c["p_equivalent"] = v ? opt(v->p_equivalent) : bj::value(nullptr);
    c["mde"] = v ? opt(v->mde) : bj::value(nullptr);
    c["change"] = v ? change_text(v->ratio, v->ci_lo, v->ci_hi) : "";
    c["reason"] = v ? v->reason : "";
    c["pairing"] = v ? to_string(v->pairing) : "";
    c["head"] = head_result ? bj::value(side_json(*head_result)) : bj::value(nullptr);
    auto b = base_results.find(key);
    c["base"] = b == base_results.end() ? bj::value(nullptr) : bj::value(side_json(*b->second));
    configs.push_back(std::move(c));
  };
  for (const auto& r : head.results) add(r.key(), &r);
  // Configurations only the verdict knows (missing from the head) still get their row.
  for (const auto& [key, v] : judged) {
    if (!seen.count(key)) add(key, nullptr);
  }
  bj::object run = run_summary_json(summary_of(head));
  run["id"] = head_id;
  bj::object out{{"project", head.project},
                 {"run", std::move(run)},
                 {"environment", environment_json(head.env)},
                 {"verdict", verdict ? bj::value(to_json(*verdict)) : bj::value(nullptr)},
                 {"rope", verdict ? verdict->policy.rope : gate_policy{}.rope},
                 {"configs", std::move(configs)}};
  if (base) {
    out["base_run"] = bj::object{
        {"id", base_id}, {"commit", base->commit}, {"created_at", base->created_at}, {"env_id", base->env.env_id}};
  } else {
    out["base_run"] = nullptr;
  }
  return out;
}

bj::object run_data(store::database& db, std::int64_t run_id) {
  auto head = db.find_run(run_id);
  if (!head) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  std::optional<verdict_document> verdict;
  std::string verdict_kind;
  if (auto row = db.verdict_of_run(run_id)) {
    verdict = verdict_from_json(json::parse(row->document, "stored verdict"), "stored verdict");
    verdict_kind = to_string(row->kind);
  }
  std::optional<store::stored_run> base;
  if (verdict && verdict->baseline) {
    // A paired verdict names its base revision ("paired:REF"), not a stored run: no base samples to show then.
    const auto& id = verdict->baseline->id;
    if (!id.empty() && id.size() < 19 &&
        std::all_of(id.begin(), id.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      base = db.find_run(std::stoll(id));
    }
  }
  auto record = db.baseline_of_run(run_id);
  if (verdict) verdict->reason = shown_reason(*verdict, record, head->summary);
  auto out = run_data(head->document, std::to_string(run_id), base ? &base->document : nullptr,
                      base ? std::to_string(base->summary.id) : "", verdict ? &*verdict : nullptr);
  bj::object run = run_summary_json(head->summary);
  out["run"] = std::move(run);
  out["verdict_kind"] = verdict_kind;  // "paired", "request", "regression"; "" without a verdict
  // Whether this run is a baseline now, and for an accepted one, who accepted it, when and why.
  if (record) {
    out["baseline_record"] = bj::object{{"source", to_string(record->source)},
                                        {"branch", record->branch},
                                        {"accepted_by", record->accepted_by},
                                        {"reason", record->reason},
                                        {"created_at", record->created_at}};
  } else {
    out["baseline_record"] = nullptr;
  }
  return out;
}

bj::object compare_data(store::database& db, const std::vector<std::int64_t>& run_ids,
                        const std::map<std::string, double>& prices) {
  std::vector<store::stored_run> runs;
  for (auto id : run_ids) {
    auto r = db.find_run(id);
    if (!r) throw error(errc::not_found, "run " + std::to_string(id) + " does not exist");
    if (!runs.empty() && r->summary.project != runs.front().summary.project) {
      throw error(errc::bad_input, "runs " + std::to_string(run_ids.front()) + " and " + std::to_string(id) +
                                       " belong to different projects; compare runs of one project");
    }
    for (const auto& earlier : runs) {
      if (earlier.summary.env_id == r->summary.env_id) {
        throw error(errc::bad_input, "runs " + std::to_string(earlier.summary.id) + " and " + std::to_string(id) +
                                         " were measured in the same environment; a hardware comparison needs one "
                                         "run per environment (a run's page compares it with its baseline)");
      }
    }
    runs.push_back(std::move(*r));
  }
  for (const auto& priced : prices) {
    const std::string& env_id = priced.first;
    bool used = std::any_of(runs.begin(), runs.end(), [&](const auto& r) { return r.summary.env_id == env_id; });
    if (!used) {
      throw error(errc::bad_input,
                  "prices: environment \"" + env_id.substr(0, 80) + "\" is not one of the compared runs' environments");
    }
  }
  bj::array run_list;
  for (const auto& r : runs) {
    auto price = prices.find(r.summary.env_id);
    bj::object o = run_summary_json(r.summary);
    o["device"] = r.document.env.device;
    o["cpu"] = r.document.env.cpu;
    o["price_per_hour"] = price == prices.end() ? bj::value(nullptr) : bj::value(price->second);
    run_list.push_back(std::move(o));
  }
  std::map<config_key, std::vector<std::optional<interval_median>>> medians;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& res : runs[i].document.results) {
      auto& row = medians[res.key()];
      row.resize(runs.size());
      if (res.status != result_status::ok || res.samples_ms.empty()) continue;
      auto m = stats::median_with_interval(res.samples_ms);
      row[i] = with_interval(m.median, m.lo, m.hi);
    }
  }
  bj::array configs;
  for (auto& [key, row] : medians) {
    row.resize(runs.size());
    bj::array ms, ms_lo, ms_hi, ratio, ratio_lo, ratio_hi, cost;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      ms.push_back(row[i] ? bj::value(row[i]->median) : bj::value(nullptr));
      ms_lo.push_back(row[i] ? bj::value(row[i]->lo) : bj::value(nullptr));
      ms_hi.push_back(row[i] ? bj::value(row[i]->hi) : bj::value(nullptr));
      if (row[i] && row[0]) {
        auto r = ratio_json(*row[i], *row[0]);
        ratio.push_back(r["ratio"]);
        // The first run against itself is exactly 1: no interval to draw.
        ratio_lo.push_back(i == 0 ? bj::value(1.0) : r["lo"]);
        ratio_hi.push_back(i == 0 ? bj::value(1.0) : r["hi"]);
      } else {
        ratio.push_back(nullptr);
        ratio_lo.push_back(nullptr);
        ratio_hi.push_back(nullptr);
      }
      // Items per hour = batch / (ms / 1000) * 3600; cost per million items = price / items per hour * 1e6.
      auto price = prices.find(runs[i].summary.env_id);
      if (row[i] && price != prices.end() && key.batch > 0) {
        cost.push_back(price->second * row[i]->median / (3.6 * static_cast<double>(key.batch)));
      } else {
        cost.push_back(nullptr);
      }
    }
    bj::object c = key_json(key);
    c["median_ms"] = std::move(ms);
    c["median_lo_ms"] = std::move(ms_lo);
    c["median_hi_ms"] = std::move(ms_hi);
    c["ratio"] = std::move(ratio);
    c["ratio_lo"] = std::move(ratio_lo);
    c["ratio_hi"] = std::move(ratio_hi);
    c["cost_per_million"] = std::move(cost);
    configs.push_back(std::move(c));
  }
  return {{"project", runs.front().summary.project},
          {"reference_run_id", std::to_string(runs.front().summary.id)},
          {"runs", std::move(run_list)},
          {"configs", std::move(configs)}};
}

bj::object landing_data(store::database& db, const std::optional<std::string>& token_project) {
  bj::array projects;
  for (const auto& p :
       db.readable_projects(token_project ? std::optional<std::string_view>(*token_project) : std::nullopt)) {
    projects.push_back(
        bj::object{{"name", p.project.name},
                   {"public", p.project.is_public},
                   {"n_runs", p.n_runs},
                   {"last_run_at", p.last_run_at.empty() ? bj::value(nullptr) : bj::value(p.last_run_at)}});
  }
  return {{"projects", std::move(projects)},
          {"signed_in", token_project ? bj::value(*token_project) : bj::value(nullptr)}};
}

}  // namespace rnx::pages
