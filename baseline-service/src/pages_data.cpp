// The JSON behind each page: overview, configuration history (downsampled), run evidence and comparison.
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

namespace rnx::pages {

namespace {


bj::value opt(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }
bj::value opt(const std::optional<std::int64_t>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

// Whether an accepted run was accepted as slower in this configuration: its stored verdict called it slower, or,
// without one, its number lies above the band around the baseline it replaced. An accept moves the baseline of
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
      // a verdict of an older schema: judged by the numbers below
    }
  }
  return replaced && p.number.ms && *replaced > 0 && *p.number.ms / *replaced > 1 + rope;
}

}  // namespace

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

std::optional<ratio_with_interval> ratio_of(const store::run_number& a, const store::run_number& b) {
  if (!a.ms || !b.ms || !(*a.ms > 0) || !(*b.ms > 0)) return std::nullopt;
  ratio_with_interval out{*a.ms / *b.ms, std::nullopt, std::nullopt};
  auto usable = [](const store::run_number& n) {
    return !n.unstable && n.lo_ms && n.hi_ms && *n.lo_ms > 0 && *n.lo_ms <= *n.ms && *n.hi_ms >= *n.ms;
  };
  if (!usable(a) || !usable(b)) return out;
  const double down = std::hypot(std::log(*a.ms / *a.lo_ms), std::log(*b.hi_ms / *b.ms));
  const double up = std::hypot(std::log(*a.hi_ms / *a.ms), std::log(*b.ms / *b.lo_ms));
  out.lo = out.ratio * std::exp(-down);
  out.hi = out.ratio * std::exp(up);
  return out;
}

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
      if (!p.number.ms) continue;  // an errored or skipped run has no time to draw
      if (p.baseline_source == baseline_kind::accepted && accepted_as_slower(db, p, key, in_force, rope)) {
        slower_accepts.insert(p.run_id);
      }
      if (p.baseline_source != baseline_kind::unknown) {
        in_force = p.number.ms;
        steps.push_back(
            bj::object{{"run_id", std::to_string(p.run_id)}, {"t", p.created_at}, {"stat_ms", *p.number.ms}});
      }
      medians.push_back(*p.number.ms);
      keep.push_back(slower_accepts.count(p.run_id) > 0);
      rows.push_back(i);
    }
    bj::array drawn;
    for (auto k : downsample(medians, keep, static_cast<std::size_t>(q.points))) {
      const auto& p = points[rows[k]];
      const bool slower_accept = slower_accepts.count(p.run_id) > 0;
      bj::object point{
          {"run_id", std::to_string(p.run_id)},
          {"t", p.created_at},
          {"n", p.n},
          {"baseline",
           p.baseline_source == baseline_kind::unknown ? bj::value(nullptr) : bj::value(to_string(p.baseline_source))},
          {"accepted_slowdown", slower_accept},
          {"branch", p.branch},
          {"commit", p.commit},
          {"pull_request", opt(p.pull_request)}};
      write_number(point, p.number);
      drawn.push_back(std::move(point));
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
  out["statistic"] = statistic_description;
  out["series"] = std::move(series);
  out["accepted"] = std::move(accepted);
  // Events drawn as vertical lines across the chart ({"t", "env_id", "label", "run_id"}); none are computed here.
  out["markers"] = bj::array{};
  // The configuration's change points (docs/drift.md), drawn as their own markers with a table below the chart.
  out["changes"] = change_markers(db, project, key, q);
  return out;
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
