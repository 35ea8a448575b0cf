// The project overview: an overview_view from the store (environments; per configuration and environment the base
// branch's newest baseline, its change from the one before and a sparkline of its baselines; the newest verdicts),
// its JSON and its HTML. Every number is the run statistic the verdict compares, with its unstable flag.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace rnx::pages {

using namespace parts;

std::string_view to_string(trend_kind t) {
  switch (t) {
    case trend_kind::slower: return "slower";
    case trend_kind::faster: return "faster";
    case trend_kind::flat: return "flat";
  }
  return "flat";
}

std::optional<trend_kind> trend_kind_from_string(std::string_view name) {
  return enum_from_name(name, {trend_kind::slower, trend_kind::faster, trend_kind::flat});
}

namespace {

constexpr int overview_baselines = 120;  // newest baseline records read: the sparklines and the newest two of each
constexpr int overview_verdict_count = 8;

// The branch with the most baseline runs among `records` (the newest ones): the base branch, where pushes land;
// ties go to the branch of the newest record.
std::string most_baselined_branch(const std::vector<store::baseline_result>& records) {
  std::map<std::string, std::size_t> runs;
  std::set<std::int64_t> seen;
  for (const auto& b : records) {
    if (seen.insert(b.run_id).second) ++runs[b.branch];
  }
  std::string best = records.empty() ? std::string() : records.front().branch;
  for (const auto& [branch, n] : runs) {
    if (n > runs[best]) best = branch;
  }
  return best;
}

overview_baseline baseline_of(const store::baseline_result& b) { return {b.run_id, b.source, b.created_at, b.number}; }

// One configuration in one environment from its baselines (newest first).
overview_series series_of(const std::string& env_id, const std::vector<store::baseline_result>& baselines,
                          double rope) {
  overview_series s;
  s.env_id = env_id;
  if (!baselines.empty()) {
    s.baseline = baseline_of(baselines.front());
    if (baselines.size() > 1) s.change = ratio_of(baselines[0].number, baselines[1].number);
    if (s.change) {
      s.trend = s.change->ratio > 1 + rope   ? trend_kind::slower
                : s.change->ratio < 1 - rope ? trend_kind::faster
                                             : trend_kind::flat;
    }
  }
  for (auto it = baselines.rbegin(); it != baselines.rend(); ++it) {
    if (it->number.ms) s.recent.push_back(baseline_of(*it));
  }
  return s;
}

// The newest verdicts; `decisions` gets each configuration's decision in each of them.
std::vector<overview_verdict> recent_verdicts(store::database& db, const store::project_info& project,
                                              std::map<config_key, std::vector<overview_decision>>& decisions) {
  std::vector<overview_verdict> out;
  for (const auto& row : db.recent_verdicts(project.id, overview_verdict_count)) {
    verdict_document v;
    try {
      v = verdict_from_json(json::parse(row.document, "stored verdict"), "stored verdict");
    } catch (const error&) {
      continue;  // a verdict from an older schema: the run page still shows its run
    }
    overview_verdict o;
    for (const auto& c : v.configs) {
      ++o.counts[c.result];
      decisions[c.key].push_back(
          {row.run_id, row.run.env_id, c.result, c.ratio, change_text(c.ratio, c.ci_lo, c.ci_hi)});
    }
    o.run_id = row.run_id;
    const auto record = db.baseline_of_run(row.run_id);
    o.verdict = shown_overall(v, record);
    o.reason = shown_reason(v, record, row.run);
    // The gate's paired comparison: stored as its own kind, or named by the base revision it measured.
    o.paired = row.kind == store::verdict_kind::paired || (v.baseline && v.baseline->id.rfind("paired:", 0) == 0);
    o.branch = row.run.branch;
    o.commit = row.run.commit;
    o.pull_request = row.run.pull_request;
    o.env_id = row.run.env_id;
    o.created_at = row.created_at;
    out.push_back(std::move(o));
  }
  return out;
}

bj::value opt(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

bj::object decision_json(const overview_decision& d) {
  return {{"run_id", std::to_string(d.run_id)},
          {"env_id", d.env_id},
          {"decision", to_string(d.result)},
          {"ratio", opt(d.ratio)},
          {"change", d.change}};
}

bj::object baseline_json(const overview_baseline& b) {
  bj::object o{{"run_id", std::to_string(b.run_id)}, {"source", to_string(b.source)}, {"created_at", b.created_at}};
  write_number(o, b.number);
  return o;
}

bj::object series_json(const overview_series& s) {
  bj::array recent;
  for (const auto& b : s.recent) recent.push_back(baseline_json(b));
  bj::array verdicts;
  for (const auto& d : s.verdicts) verdicts.push_back(decision_json(d));
  bj::value change = nullptr;
  if (s.change) change = bj::object{{"ratio", s.change->ratio}, {"lo", opt(s.change->lo)}, {"hi", opt(s.change->hi)}};
  return {{"env_id", s.env_id},
          {"baseline", s.baseline ? bj::value(baseline_json(*s.baseline)) : bj::value(nullptr)},
          {"trend", s.trend ? bj::value(to_string(*s.trend)) : bj::value(nullptr)},
          {"trend_ratio", s.change ? bj::value(s.change->ratio) : bj::value(nullptr)},
          {"change", std::move(change)},
          {"recent", std::move(recent)},
          {"verdicts", std::move(verdicts)}};
}

bj::object verdict_json(const overview_verdict& v) {
  bj::object counts;
  for (const auto& [d, n] : v.counts) counts[to_string(d)] = n;
  return {{"run_id", std::to_string(v.run_id)},
          {"verdict", to_string(v.verdict)},
          {"reason", v.reason},
          {"paired", v.paired},
          {"branch", v.branch},
          {"commit", v.commit},
          {"pull_request", v.pull_request ? bj::value(*v.pull_request) : bj::value(nullptr)},
          {"env_id", v.env_id},
          {"created_at", v.created_at},
          {"counts", std::move(counts)}};
}

}  // namespace

overview_view overview_data(store::database& db, const store::project_info& project) {
  overview_view v;
  v.project = project.name;
  v.is_public = project.is_public;
  v.rope = project_rope(db, project.id);
  for (const auto& e : db.environments(project.id)) {
    v.environments.push_back({e.env_id, e.device, e.cpu, e.n_runs, e.last_run_at, e.newest_run_id});
  }
  // Only the base branch's baselines: a pull request's runs (and another branch's pushes) are no baseline of it.
  const auto records = db.recent_baseline_results(project.id, overview_baselines);
  v.base_branch = most_baselined_branch(records);
  std::map<config_key, std::map<std::string, std::vector<store::baseline_result>>> by_config;  // newest first
  for (const auto& b : records) {
    if (b.branch == v.base_branch) by_config[b.key][b.env_id].push_back(b);
  }
  std::map<config_key, std::vector<overview_decision>> decisions;
  v.verdicts = recent_verdicts(db, project, decisions);
  // An environment judged without a baseline of the base branch (a pull request's paired job) keeps its row for
  // its decisions, with no baseline and no sparkline.
  for (const auto& [key, judged] : decisions) {
    for (const auto& d : judged) by_config[key][d.env_id];
  }
  for (const auto& [key, by_env] : by_config) {
    overview_config c{key, {}, decisions[key]};
    for (const auto& [env_id, baselines] : by_env) {
      auto s = series_of(env_id, baselines, v.rope);
      // Only this environment's decisions: a chip never stands for another machine's verdict.
      for (const auto& d : c.verdicts) {
        if (d.env_id == env_id) s.verdicts.push_back(d);
      }
      c.series.push_back(std::move(s));
    }
    v.configs.push_back(std::move(c));
  }
  return v;
}

bj::object to_json(const overview_view& v) {
  bj::array envs;
  for (const auto& e : v.environments) {
    envs.push_back(bj::object{{"env_id", e.env_id},
                              {"device", e.device},
                              {"cpu", e.cpu},
                              {"n_runs", e.n_runs},
                              {"last_run_at", e.last_run_at},
                              {"newest_run_id", std::to_string(e.newest_run_id)}});
  }
  bj::array configs;
  for (const auto& c : v.configs) {
    bj::object o = key_json(c.key);
    bj::array series;
    for (const auto& s : c.series) series.push_back(series_json(s));
    bj::array verdicts;
    for (const auto& d : c.verdicts) verdicts.push_back(decision_json(d));
    o["series"] = std::move(series);
    o["verdicts"] = std::move(verdicts);
    configs.push_back(std::move(o));
  }
  bj::array verdicts;
  for (const auto& r : v.verdicts) verdicts.push_back(verdict_json(r));
  return {{"project", v.project},
          {"public", v.is_public},
          {"rope", v.rope},
          {"statistic", statistic_description},
          {"base_branch", v.base_branch},
          {"environments", std::move(envs)},
          {"configs", std::move(configs)},
          {"verdicts", std::move(verdicts)}};
}

namespace {

// The overview's arrow for a trend; a dash without one (fewer than two baselines to compare).
std::string_view trend_arrow(std::optional<trend_kind> t) {
  if (!t) return "&ndash;";
  switch (*t) {
    case trend_kind::slower: return "&#9650;";
    case trend_kind::faster: return "&#9660;";
    case trend_kind::flat: return "&#8594;";
  }
  return "&ndash;";
}

// A small server-drawn sparkline of the base branch's baselines: no script needed, so the overview stays light
// with many configurations. An unstable baseline is a red dot on the line.
std::string sparkline(const std::vector<overview_baseline>& points) {
  if (points.size() < 2) return "";
  auto [lo_it, hi_it] = std::minmax_element(points.begin(), points.end(),
                                            [](const auto& a, const auto& b) { return *a.number.ms < *b.number.ms; });
  const double lo = *lo_it->number.ms;
  const double hi = *hi_it->number.ms;
  const double span = hi > lo ? hi - lo : 1;
  auto xy = [&](std::size_t i) {
    char buffer[48];
    std::snprintf(buffer, sizeof buffer, "%.1f,%.1f",
                  100.0 * static_cast<double>(i) / static_cast<double>(points.size() - 1),
                  18.0 - 16.0 * (*points[i].number.ms - lo) / span);
    return std::string(buffer);
  };
  std::ostringstream os;
  os << "<svg class=\"spark\" viewBox=\"0 0 100 20\" preserveAspectRatio=\"none\" role=\"img\" aria-label=\"the "
        "base branch's baselines\"><polyline points=\"";
  for (std::size_t i = 0; i < points.size(); ++i) os << xy(i) << " ";
  os << "\"/>";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!points[i].number.unstable) continue;
    const std::string at = xy(i);
    const auto comma = at.find(',');
    os << "<circle class=\"unstable\" cx=\"" << at.substr(0, comma) << "\" cy=\"" << at.substr(comma + 1)
       << "\" r=\"1.6\"/>";
  }
  os << "</svg>";
  return os.str();
}

// The sparkline's scale: the lowest and highest number it draws, and how many of them are unstable.
std::string spark_scale(const std::vector<overview_baseline>& points) {
  if (points.size() < 2) return "";
  std::optional<double> lo;
  std::optional<double> hi;
  std::size_t unstable = 0;
  for (const auto& p : points) {
    lo = lo ? std::min(*lo, *p.number.ms) : *p.number.ms;
    hi = hi ? std::max(*hi, *p.number.ms) : *p.number.ms;
    unstable += p.number.unstable ? 1 : 0;
  }
  return "<span class=\"spark-scale\">" + fmt(lo, "%.3g") + "&ndash;" + fmt(hi, "%.3g") + " ms</span>" +
         (unstable ? "<span class=\"spark-scale unstable\">" + std::to_string(unstable) + " unstable</span>"
                   : std::string());
}

std::string change_cell(const std::optional<ratio_with_interval>& change) {
  if (!change) return "&ndash;";
  auto text = change_text(change->ratio, change->lo, change->hi);
  return text.empty() ? std::string("&ndash;") : escape_html(text);
}

void overview_environments(std::ostringstream& os, const overview_view& v, const link_style& links) {
  std::ostringstream t;
  t << "<table class=\"envs\"><thead><tr><th>env_id</th><th>machine</th>"
       "<th class=\"num\">runs</th><th>last run</th></tr></thead><tbody>\n";
  std::vector<std::string> newest_runs;
  for (const auto& env : v.environments) {
    t << "<tr><td><code title=\"" << escape_html(env.env_id) << "\">" << escape_html(short_env(env.env_id))
      << "</code></td><td>" << machine_text(env.device, env.cpu) << "</td><td class=\"num\">" << env.n_runs
      << "</td><td>" << escape_html(env.last_run_at) << "</td></tr>\n";
    if (env.newest_run_id > 0) newest_runs.push_back(std::to_string(env.newest_run_id));
  }
  t << "</tbody></table>";
  os << "<h2>Environments</h2>\n" << scroll_box(t.str());
  if (newest_runs.size() >= 2 && !links.report) {
    std::string ids;
    for (std::size_t i = 0; i < newest_runs.size() && i < static_cast<std::size_t>(max_compare_runs); ++i) {
      ids += (i ? "," : "") + newest_runs[i];
    }
    os << "<p>" << link("/compare?runs=" + ids, "Compare the newest run of each environment") << "</p>\n";
  }
}

void series_row(std::ostringstream& t, const overview_series& se, const link_style& links) {
  const std::string trend = se.trend ? std::string(to_string(*se.trend)) : "none";
  std::string baseline_html = "&ndash;";
  if (se.baseline) {
    baseline_html = link(links.run(std::to_string(se.baseline->run_id)), fmt(se.baseline->number.ms, "%.4g", " ms")) +
                    unstable_badge(se.baseline->number);
    if (se.baseline->source == baseline_kind::accepted) baseline_html += " <span class=\"badge acc\">accepted</span>";
  }
  t << "<td><code title=\"" << escape_html(se.env_id) << "\">" << escape_html(short_env(se.env_id))
    << "</code></td><td class=\"num\">" << baseline_html << "</td><td class=\"num delta t-" << trend << "\">"
    << change_cell(se.change) << "</td><td class=\"trend t-" << trend << "\" title=\""
    << (se.change ? "newest baseline / previous: " + fmt(se.change->ratio, "%.3f")
                  : std::string("fewer than two baselines to compare"))
    << "\">" << trend_arrow(se.trend) << "</td><td class=\"spark-cell\">" << sparkline(se.recent)
    << spark_scale(se.recent) << "</td><td>";
  for (const auto& d : se.verdicts) {
    const std::string decision(to_string(d.result));
    const std::string title = d.change.empty() ? decision : decision + " " + d.change;
    t << link(links.run(std::to_string(d.run_id)), "<span title=\"run " + std::to_string(d.run_id) + ": " +
                                                       escape_html(title) + "\">" + chip(decision) + "</span>")
      << " ";
  }
  t << "</td>";
}

void overview_configs(std::ostringstream& os, const overview_view& v, const link_style& links) {
  std::ostringstream t;
  t << "<table class=\"configs\"><thead><tr><th>configuration</th><th>environment</th>"
       "<th class=\"num\">baseline</th><th class=\"num\">&Delta;% (95%)</th><th>trend</th>"
       "<th>baselines of "
    << escape_html(v.base_branch) << "</th><th>last verdicts</th></tr></thead><tbody>\n";
  for (const auto& c : v.configs) {
    bool first = true;
    for (const auto& se : c.series) {
      t << "<tr class=\"config-row\">";
      if (first) {
        t << "<td rowspan=\"" << c.series.size() << "\">"
          << link(links.config(v.project, c.key), "<code>" + escape_html(c.key.label()) + "</code>") << "</td>";
      }
      series_row(t, se, links);
      t << "</tr>\n";
      first = false;
    }
  }
  t << "</tbody></table>";
  os << "<h2>Configurations</h2>\n<p class=\"legend\">Times are the verdict's: " << escape_html(statistic_description)
     << ". Baseline: the newest baseline of " << escape_html(v.base_branch)
     << ". &Delta;%: it against the one before it, with a 95% interval; beyond &plusmn;" << fmt(v.rope * 100, "%.3g")
     << "% it is slower (&#9650;) or faster (&#9660;); &ndash; with fewer than two baselines. The sparkline: the "
        "baselines of "
     << escape_html(v.base_branch)
     << " oldest to newest, lowest to highest as labelled (pull-request runs are not baselines); a red dot is an "
        "unstable one.</p>\n"
     << scroll_box(t.str());
}

void overview_verdicts(std::ostringstream& os, const overview_view& v, const link_style& links) {
  os << "<h2>Last verdicts</h2>\n";
  if (v.verdicts.empty()) {
    os << "<p>No verdict stored yet: the gate asks for one for every pull request it judges.</p>\n";
    return;
  }
  std::ostringstream t;
  t << "<table class=\"verdicts\"><thead><tr><th>run</th><th>verdict</th><th>branch</th>"
       "<th>pull request</th><th>commit</th><th>environment</th><th>decisions</th><th>reason</th></tr></thead>"
       "<tbody>\n";
  for (const auto& r : v.verdicts) {
    std::string counts;
    for (const auto& [d, n] : r.counts) counts += chip(to_string(d)) + "&times;" + std::to_string(n) + " ";
    const std::string overall(to_string(r.verdict));
    const std::string id = std::to_string(r.run_id);
    t << "<tr><td>" << link(links.run(id), id) << "</td><td><span class=\"v v-" << overall << "\">" << overall
      << "</span>" << (r.paired ? " <span class=\"badge\">paired</span>" : "") << "</td><td>" << escape_html(r.branch)
      << "</td><td>" << (r.pull_request ? "#" + std::to_string(*r.pull_request) : std::string()) << "</td><td><code>"
      << escape_html(r.commit.substr(0, 10)) << "</code></td><td><code>" << escape_html(short_env(r.env_id))
      << "</code></td><td>" << counts << "</td><td>" << escape_html(r.reason) << "</td></tr>\n";
  }
  t << "</tbody></table>";
  os << scroll_box(t.str());
}

}  // namespace

page overview_page(const overview_view& v, const link_style& links) {
  std::ostringstream os;
  if (!links.report) os << "<p class=\"crumbs\"><a href=\"/\">projects</a> / overview</p>\n";
  os << "<h1>" << escape_html(v.project) << " <span class=\"badge\">" << (v.is_public ? "public" : "private")
     << "</span></h1>\n";
  if (v.configs.empty() && v.environments.empty()) {
    os << upload_help(v.project);
  } else {
    overview_environments(os, v, links);
    overview_configs(os, v, links);
    overview_verdicts(os, v, links);
  }
  return {page_kind::overview, v.project + " overview", "overview", os.str(), to_json(v)};
}

}  // namespace rnx::pages
