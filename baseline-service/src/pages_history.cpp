// One configuration's history: a history_view from the store (per environment its runs, downsampled, each the run
// statistic the verdict compares with its unstable flag; the baseline in force; accepted slowdowns; change
// points), its JSON and its HTML. The chart itself is drawn by rnx-pages.js from the JSON.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace rnx::pages {

using namespace parts;

namespace {

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

// The change points of one configuration in the history's range, as chart markers (docs/drift.md).
std::vector<store::change_record> changes_in_range(store::database& db, const store::project_info& project,
                                                   const config_key& key, const history_query& q) {
  store::change_filter filter;
  filter.config = key;
  filter.env_id = q.env_id;
  filter.limit = 1000;
  std::vector<store::change_record> out;
  for (auto& c : db.change_points(project.id, filter)) {
    if ((q.from && c.created_at < *q.from) || (q.to && c.created_at >= *q.to)) continue;
    out.push_back(std::move(c));
  }
  return out;
}

history_point_view point_of(const store::config_point& p, bool slower_accept) {
  return {p.run_id, p.created_at, p.n, p.baseline_source, slower_accept, p.branch, p.commit, p.pull_request, p.number};
}

// One environment's points (rows [begin, end) of `points`, oldest first) as a series; `accepted` gets its accepted
// slowdowns.
history_series_view series_of(store::database& db, const config_key& key,
                              const std::vector<store::config_point>& points, std::size_t begin, std::size_t end,
                              const history_query& q, double rope, std::vector<accepted_slowdown>& accepted) {
  history_series_view s;
  s.env_id = points[begin].env_id;
  s.n_total = static_cast<std::int64_t>(end - begin);
  std::vector<double> numbers;
  std::vector<bool> keep;
  std::vector<std::size_t> rows;
  std::set<std::int64_t> slower_accepts;
  std::optional<double> in_force;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& p = points[i];
    if (!p.number.ms) continue;  // an errored or skipped run has no time to draw
    if (p.baseline_source == baseline_kind::accepted && accepted_as_slower(db, p, key, in_force, rope)) {
      slower_accepts.insert(p.run_id);
    }
    if (p.baseline_source != baseline_kind::unknown) {
      in_force = p.number.ms;
      s.baseline_steps.push_back({p.run_id, p.created_at, *p.number.ms});
    }
    numbers.push_back(*p.number.ms);
    keep.push_back(slower_accepts.count(p.run_id) > 0);
    rows.push_back(i);
  }
  for (auto k : downsample(numbers, keep, static_cast<std::size_t>(q.points))) {
    const auto& p = points[rows[k]];
    const bool slower_accept = slower_accepts.count(p.run_id) > 0;
    s.points.push_back(point_of(p, slower_accept));
    if (slower_accept) {
      auto record = db.baseline_of_run(p.run_id);
      accepted.push_back(
          {p.run_id, p.env_id, p.created_at, record ? record->accepted_by : "", record ? record->reason : ""});
    }
  }
  return s;
}

bj::value opt_text(const std::optional<std::string>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

bj::object point_json(const history_point_view& p) {
  bj::object o{
      {"run_id", std::to_string(p.run_id)},
      {"t", p.t},
      {"n", p.n},
      {"baseline", p.baseline == baseline_kind::unknown ? bj::value(nullptr) : bj::value(to_string(p.baseline))},
      {"accepted_slowdown", p.accepted_slowdown},
      {"branch", p.branch},
      {"commit", p.commit},
      {"pull_request", p.pull_request ? bj::value(*p.pull_request) : bj::value(nullptr)}};
  write_number(o, p.number);
  return o;
}

bj::object series_json(const history_series_view& s) {
  bj::array points;
  for (const auto& p : s.points) points.push_back(point_json(p));
  bj::array steps;
  for (const auto& b : s.baseline_steps) {
    steps.push_back(bj::object{{"run_id", std::to_string(b.run_id)}, {"t", b.t}, {"stat_ms", b.ms}});
  }
  return {{"env_id", s.env_id},
          {"device", s.device},
          {"colour", s.colour},
          {"n_total", s.n_total},
          {"n_shown", static_cast<std::int64_t>(s.points.size())},
          {"points", std::move(points)},
          {"baseline_steps", std::move(steps)}};
}

bj::object change_json(const store::change_record& c) {
  return {{"run_id", std::to_string(c.run_id)},
          {"env_id", c.env_id},
          {"branch", c.branch},
          {"t", c.created_at},
          {"commit", c.commit},
          {"before_commit", c.before_commit},
          {"ratio", c.ratio},
          {"ci95", bj::array{c.ci_lo, c.ci_hi}},
          {"probability", c.probability},
          {"direction", c.ratio > 1 ? "slower" : "faster"}};
}

}  // namespace

history_view history_data(store::database& db, const store::project_info& project, const config_key& key,
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
  history_view v;
  v.project = project.name;
  v.is_public = project.is_public;
  v.key = key;
  v.env_id = q.env_id;
  v.from = q.from;
  v.to = q.to;
  v.points = q.points;
  v.rope = project_rope(db, project.id);
  for (std::size_t begin = 0; begin < points.size();) {
    std::size_t end = begin;
    while (end < points.size() && points[end].env_id == points[begin].env_id) ++end;
    auto s = series_of(db, key, points, begin, end, q, v.rope, v.accepted);
    for (std::size_t e = 0; e < envs.size(); ++e) {
      if (envs[e].env_id != s.env_id) continue;
      s.device = envs[e].device;
      s.colour = static_cast<std::int64_t>(e);  // the project's environment order: the same with any filter
    }
    v.series.push_back(std::move(s));
    begin = end;
  }
  v.changes = changes_in_range(db, project, key, q);
  return v;
}

bj::object to_json(const history_view& v) {
  bj::object out = key_json(v.key);
  out["project"] = v.project;
  out["public"] = v.is_public;
  out["range"] = bj::object{
      {"env_id", opt_text(v.env_id)}, {"from", opt_text(v.from)}, {"to", opt_text(v.to)}, {"points", v.points}};
  out["rope"] = v.rope;
  out["statistic"] = statistic_description;
  bj::array series;
  for (const auto& s : v.series) series.push_back(series_json(s));
  out["series"] = std::move(series);
  bj::array accepted;
  for (const auto& a : v.accepted) {
    accepted.push_back(bj::object{{"run_id", std::to_string(a.run_id)},
                                  {"env_id", a.env_id},
                                  {"t", a.t},
                                  {"accepted_by", a.accepted_by},
                                  {"reason", a.reason}});
  }
  out["accepted"] = std::move(accepted);
  // Events drawn as vertical lines across the chart ({"t", "env_id", "label", "run_id"}); none are computed here.
  out["markers"] = bj::array{};
  // The configuration's change points (docs/drift.md), drawn as their own markers with a table below the chart.
  bj::array changes;
  for (const auto& c : v.changes) changes.push_back(change_json(c));
  out["changes"] = std::move(changes);
  return out;
}

namespace {

// The history's change points (docs/drift.md) as a table; the chart marks the same ones with vertical lines.
std::string change_table(const history_view& v, const link_style& links) {
  std::ostringstream os;
  os << "<h2>Change points</h2>\n";
  if (v.changes.empty()) {
    os << "<p class=\"no-changes\">None in this range.</p>\n";
    return os.str();
  }
  std::ostringstream t;
  t << "<table class=\"changes\"><thead><tr><th>first run after</th><th>commit</th><th>branch</th>"
       "<th>environment</th><th>when</th><th class=\"num\">ratio</th><th class=\"num\">95% interval</th>"
       "<th class=\"num\">probability</th></tr></thead><tbody>\n";
  for (const auto& c : v.changes) {
    const std::string id = std::to_string(c.run_id);
    t << "<tr class=\"change " << (c.ratio > 1 ? "slower" : "faster") << "\"><td>" << link(links.run(id), id)
      << "</td><td><code>" << escape_html(c.commit.substr(0, 12)) << "</code></td><td>" << escape_html(c.branch)
      << "</td><td><code>" << escape_html(short_env(c.env_id)) << "</code></td><td>" << escape_html(c.created_at)
      << "</td><td class=\"num\">" << fmt(c.ratio, "%.3f") << "</td><td class=\"num\">" << fmt(c.ci_lo, "%.3f")
      << " &ndash; " << fmt(c.ci_hi, "%.3f") << "</td><td class=\"num\">" << fmt(c.probability, "%.3f")
      << "</td></tr>\n";
  }
  t << "</tbody></table>";
  os << scroll_box(t.str());
  return os.str();
}

// A GET form: every choice is a URL people can share.
std::string range_form(const history_view& v, bool log_scale) {
  std::ostringstream os;
  os << "<form class=\"controls\" method=\"get\"><label>environment <select name=\"env_id\"><option value=\"\">all"
        "</option>";
  for (const auto& s : v.series) {
    os << "<option value=\"" << escape_html(s.env_id) << "\"" << (v.env_id == s.env_id ? " selected" : "") << ">"
       << escape_html(short_env(s.env_id)) << " " << escape_html(s.device) << "</option>";
  }
  os << "</select></label> <label>from <input name=\"from\" placeholder=\"YYYY-MM-DD\" size=\"10\" value=\""
     << escape_html(v.from.value_or("").substr(0, 10)) << "\"></label> <label>to <input name=\"to\" "
     << "placeholder=\"YYYY-MM-DD\" size=\"10\" value=\"" << escape_html(v.to.value_or("").substr(0, 10))
     << "\"></label> <label>scale <select name=\"scale\"><option value=\"linear\">linear</option><option "
        "value=\"log\""
     << (log_scale ? " selected" : "")
     << ">log</option></select></label> <button type=\"submit\">show</button></form>\n";
  return os.str();
}

std::string series_table(const history_view& v) {
  std::ostringstream t;
  t << "<table class=\"series\"><thead><tr><th>environment</th><th>device</th><th class=\"num\">runs</th>"
       "<th class=\"num\">drawn</th><th class=\"num\">unstable</th></tr></thead><tbody>\n";
  for (const auto& s : v.series) {
    const auto unstable =
        std::count_if(s.points.begin(), s.points.end(), [](const auto& p) { return p.number.unstable; });
    t << "<tr><td><span class=\"swatch c" << s.colour % 8 << "\"></span><code title=\"" << escape_html(s.env_id)
      << "\">" << escape_html(short_env(s.env_id)) << "</code></td><td>" << escape_html(s.device)
      << "</td><td class=\"num\">" << s.n_total << "</td><td class=\"num\">" << s.points.size()
      << "</td><td class=\"num\">" << unstable << "</td></tr>\n";
  }
  t << "</tbody></table>";
  return scroll_box(t.str());
}

// Every unstable run drawn, with its reason: the crosses on the chart.
std::string unstable_table(const history_view& v, const link_style& links) {
  std::ostringstream t;
  for (const auto& s : v.series) {
    for (const auto& p : s.points) {
      if (!p.number.unstable) continue;
      const std::string id = std::to_string(p.run_id);
      t << "<tr><td>" << link(links.run(id), id) << "</td><td><code>" << escape_html(short_env(s.env_id))
        << "</code></td><td class=\"num\">" << fmt(p.number.ms, "%.4g", " ms") << "</td><td>"
        << escape_html(p.number.unstable_reason) << "</td></tr>\n";
    }
  }
  if (t.str().empty()) return "";
  return "<h2>Unstable runs</h2>\n<p class=\"legend\">Their processes disagree: the chart draws them as crosses "
         "without an interval.</p>\n" +
         scroll_box(
             "<table class=\"unstable-runs\"><thead><tr><th>run</th><th>environment</th><th class=\"num\">"
             "time</th><th>reason</th></tr></thead><tbody>\n" +
             t.str() + "</tbody></table>");
}

std::string accepted_table(const history_view& v, const link_style& links) {
  std::ostringstream os;
  os << "<h2>Accepted slowdowns</h2>\n";
  if (v.accepted.empty()) {
    os << "<p>None in this range: no run was accepted as slower in this configuration.</p>\n";
    return os.str();
  }
  std::ostringstream t;
  t << "<table class=\"accepted\"><thead><tr><th>run</th><th>environment</th><th>when</th><th>accepted by</th>"
       "<th>reason</th></tr></thead><tbody>\n";
  for (const auto& a : v.accepted) {
    const std::string id = std::to_string(a.run_id);
    t << "<tr><td>" << link(links.run(id), id) << "</td><td><code>" << escape_html(short_env(a.env_id))
      << "</code></td><td>" << escape_html(a.t) << "</td><td>" << escape_html(a.accepted_by) << "</td><td>"
      << escape_html(a.reason) << "</td></tr>\n";
  }
  t << "</tbody></table>";
  os << scroll_box(t.str());
  return os.str();
}

}  // namespace

page history_page(const history_view& v, const link_style& links, bool log_scale) {
  const std::string config = v.key.label();
  std::ostringstream os;
  os << "<p class=\"crumbs\">" << (links.report ? "" : "<a href=\"/\">projects</a> / ")
     << link(links.project(v.project), escape_html(v.project)) << " / configuration</p>\n";
  os << "<h1><code>" << escape_html(config) << "</code></h1>\n";
  if (!links.report) os << range_form(v, log_scale);
  os << "<div class=\"chart-box\"><canvas class=\"history-chart\" data-scale=\"" << (log_scale ? "log" : "linear")
     << "\" aria-label=\"each run's time over time\"></canvas></div>\n";
  os << "<p class=\"legend\">Each run's time is the verdict's: " << escape_html(statistic_description)
     << ". One colour per environment. Filled dots joined by a line: runs of the base branch "
        "(pushes); hollow squares, not joined: pull-request runs; bar: the 95% interval of a run's time; cross: an "
        "unstable run (no interval); diamond: a baseline; dashed step line: the baseline in force, with the shaded "
        "band of &plusmn;"
     << fmt(v.rope * 100, "%.3g")
     << "% around it (the gate's band of practical equivalence); red triangle: a run accepted as slower in this "
        "configuration; dashed vertical line: a change point (red slower, green faster). Click a point to open its "
        "run.</p>\n";
  os << series_table(v) << unstable_table(v, links) << accepted_table(v, links) << change_table(v, links);
  return {page_kind::history, config + " history", anchor_of("config-", config), os.str(), to_json(v)};
}

}  // namespace rnx::pages
