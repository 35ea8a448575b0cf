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
constexpr int overview_runs = 60;        // newest runs whose medians make the overview's sparklines
constexpr int overview_verdicts = 8;
constexpr std::size_t samples_per_process = 100;  // strip charts show at most this many quantiles per process
constexpr double trend_band = 0.02;

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
  return {{"id", std::to_string(s.id)}, {"commit", s.commit},       {"branch", s.branch},
          {"base_branch", s.base_branch}, {"pull_request", opt(s.pull_request)}, {"env_id", s.env_id},
          {"created_at", s.created_at}, {"baseline", s.baseline}};
}

bj::object environment_json(const environment& e) {
  return {{"env_id", e.env_id}, {"device", e.device}, {"cpu", e.cpu},         {"threads", e.threads},
          {"torch", e.torch},   {"cuda", e.cuda},     {"driver", e.driver},   {"os", e.os}};
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

  // The newest verdicts, and per configuration its decision in each of them.
  bj::array verdicts;
  std::map<config_key, bj::array> decisions;
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
      decisions[c.key].push_back(bj::object{{"run_id", std::to_string(row.run_id)},
                                            {"decision", to_string(c.result)},
                                            {"ratio", opt(c.ratio)}});
    }
    bj::object count_json;
    for (const auto& [d, n] : counts) count_json[d] = n;
    verdicts.push_back(bj::object{{"run_id", std::to_string(row.run_id)},
                                  {"verdict", to_string(v.verdict)},
                                  {"reason", v.reason},
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
      if (!s.baselines.empty()) {
        const auto& b = s.baselines.front();
        baseline = bj::object{{"run_id", std::to_string(b.run_id)},
                              {"source", b.source},
                              {"created_at", b.created_at},
                              {"median_ms", opt(b.median_ms)}};
        if (s.baselines.size() > 1 && b.median_ms && s.baselines[1].median_ms && *s.baselines[1].median_ms > 0) {
          double ratio = *b.median_ms / *s.baselines[1].median_ms;
          trend_ratio = ratio;
          trend = ratio > 1 + trend_band ? "slower" : ratio < 1 - trend_band ? "faster" : "flat";
        }
      }
      bj::array recent;
      for (double m : s.recent) recent.push_back(m);
      series.push_back(bj::object{{"env_id", env_id},
                                  {"baseline", std::move(baseline)},
                                  {"trend", std::move(trend)},
                                  {"trend_ratio", std::move(trend_ratio)},
                                  {"recent", std::move(recent)}});
    }
    bj::object c = key_json(key);
    c["series"] = std::move(series);
    c["verdicts"] = decisions.count(key) ? std::move(decisions[key]) : bj::array{};
    config_list.push_back(std::move(c));
  }
  return {{"project", project.name},         {"public", project.is_public},   {"environments", std::move(envs)},
          {"configs", std::move(config_list)}, {"verdicts", std::move(verdicts)}};
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
  bj::array series;
  bj::array accepted;
  for (std::size_t begin = 0; begin < points.size();) {
    std::size_t end = begin;
    while (end < points.size() && points[end].env_id == points[begin].env_id) ++end;
    std::vector<double> medians;
    std::vector<bool> keep;
    std::vector<std::size_t> rows;
    for (std::size_t i = begin; i < end; ++i) {
      if (!points[i].median_ms) continue;  // an errored or skipped run has no time to draw
      medians.push_back(*points[i].median_ms);
      keep.push_back(points[i].baseline_source == "accepted");
      rows.push_back(i);
    }
    bj::array drawn;
    for (auto k : downsample(medians, keep, static_cast<std::size_t>(q.points))) {
      const auto& p = points[rows[k]];
      drawn.push_back(bj::object{{"run_id", std::to_string(p.run_id)},
                                 {"t", p.created_at},
                                 {"median_ms", opt(p.median_ms)},
                                 {"lo_ms", opt(p.lo_ms)},
                                 {"hi_ms", opt(p.hi_ms)},
                                 {"n", p.n},
                                 {"baseline", p.baseline_source.empty() ? bj::value(nullptr) : bj::value(p.baseline_source)},
                                 {"branch", p.branch},
                                 {"commit", p.commit},
                                 {"pull_request", opt(p.pull_request)}});
      if (p.baseline_source == "accepted") {
        auto record = db.baseline_of_run(p.run_id);
        accepted.push_back(bj::object{{"run_id", std::to_string(p.run_id)},
                                      {"env_id", p.env_id},
                                      {"t", p.created_at},
                                      {"accepted_by", record ? record->accepted_by : ""},
                                      {"reason", record ? record->reason : ""}});
      }
    }
    std::string device;
    for (const auto& e : envs) {
      if (e.env_id == points[begin].env_id) device = e.device;
    }
    series.push_back(bj::object{{"env_id", points[begin].env_id},
                                {"device", device},
                                {"n_total", static_cast<std::int64_t>(end - begin)},
                                {"n_shown", static_cast<std::int64_t>(drawn.size())},
                                {"points", std::move(drawn)}});
    begin = end;
  }
  bj::object out = key_json(key);
  out["project"] = project.name;
  out["public"] = project.is_public;
  out["range"] = bj::object{{"env_id", q.env_id ? bj::value(*q.env_id) : bj::value(nullptr)},
                            {"from", q.from ? bj::value(*q.from) : bj::value(nullptr)},
                            {"to", q.to ? bj::value(*q.to) : bj::value(nullptr)},
                            {"points", q.points}};
  out["series"] = std::move(series);
  out["accepted"] = std::move(accepted);
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
    c["reason"] = v ? v->reason : "";
    c["pairing"] = v ? v->pairing : "";
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
                 {"configs", std::move(configs)}};
  if (base) {
    out["base_run"] = bj::object{{"id", base_id}, {"commit", base->commit}, {"created_at", base->created_at},
                                 {"env_id", base->env.env_id}};
  } else {
    out["base_run"] = nullptr;
  }
  return out;
}

bj::object run_data(store::database& db, std::int64_t run_id) {
  auto head = db.find_run(run_id);
  if (!head) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  std::optional<verdict_document> verdict;
  if (auto row = db.verdict_of_run(run_id)) {
    verdict = verdict_from_json(json::parse(row->document, "stored verdict"), "stored verdict");
  }
  std::optional<store::stored_run> base;
  if (verdict && verdict->baseline) {
    // A paired verdict names its base revision ("paired:REF"), not a stored run: no base samples to show then.
    const auto& id = verdict->baseline->id;
    if (!id.empty() && id.size() < 19 && std::all_of(id.begin(), id.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
      base = db.find_run(std::stoll(id));
    }
  }
  auto out = run_data(head->document, std::to_string(run_id), base ? &base->document : nullptr,
                      base ? std::to_string(base->summary.id) : "", verdict ? &*verdict : nullptr);
  bj::object run = run_summary_json(head->summary);
  out["run"] = std::move(run);
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
  for (const auto& [env_id, price] : prices) {
    bool used = std::any_of(runs.begin(), runs.end(), [&](const auto& r) { return r.summary.env_id == env_id; });
    if (!used) {
      throw error(errc::bad_input, "prices: environment \"" + env_id.substr(0, 80) +
                                       "\" is not one of the compared runs' environments");
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
  std::map<config_key, std::vector<std::optional<double>>> medians;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    for (const auto& res : runs[i].document.results) {
      auto& row = medians[res.key()];
      row.resize(runs.size());
      if (res.status == result_status::ok) row[i] = median(res.samples_ms);
    }
  }
  bj::array configs;
  for (auto& [key, row] : medians) {
    row.resize(runs.size());
    bj::array ms, ratio, cost;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      ms.push_back(opt(row[i]));
      ratio.push_back(row[i] && row[0] && *row[0] > 0 ? bj::value(*row[i] / *row[0]) : bj::value(nullptr));
      // Items per hour = batch / (ms / 1000) * 3600; cost per million items = price / items per hour * 1e6.
      auto price = prices.find(runs[i].summary.env_id);
      if (row[i] && price != prices.end() && key.batch > 0) {
        cost.push_back(price->second * *row[i] / (3.6 * static_cast<double>(key.batch)));
      } else {
        cost.push_back(nullptr);
      }
    }
    bj::object c = key_json(key);
    c["median_ms"] = std::move(ms);
    c["ratio"] = std::move(ratio);
    c["cost_per_million"] = std::move(cost);
    configs.push_back(std::move(c));
  }
  return {{"project", runs.front().summary.project},
          {"reference_run_id", std::to_string(runs.front().summary.id)},
          {"runs", std::move(run_list)},
          {"configs", std::move(configs)}};
}

}  // namespace rnx::pages
