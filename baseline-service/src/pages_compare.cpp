// The hardware comparison: 2 to 6 runs of one project in different environments, as a compare_view (the runs, the
// environment fields that tell them apart, each configuration's run statistic and ratio to the first), its JSON and
// its HTML.
#include "rnx/service/page_views.hpp"
#include "rnx/service/pages.hpp"

#include "pages_parts.hpp"

#include "rnx/common/error.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

namespace rnx::pages {

using namespace parts;

namespace {

// The environment fields a comparison can tell apart, in the order the page shows them; device and cpu always.
struct env_field {
  std::string_view name;
  std::function<std::string(const environment&)> value;
};
const std::vector<env_field>& env_fields() {
  static const std::vector<env_field> fields{
      {"device", [](const environment& e) { return e.device; }},
      {"cpu", [](const environment& e) { return e.cpu; }},
      {"threads", [](const environment& e) { return e.threads > 0 ? std::to_string(e.threads) : std::string(); }},
      {"compute_capability", [](const environment& e) { return e.compute_capability; }},
      {"driver", [](const environment& e) { return e.driver; }},
      {"cuda", [](const environment& e) { return e.cuda; }},
      {"torch", [](const environment& e) { return e.torch; }},
      {"python", [](const environment& e) { return e.python; }},
      {"os", [](const environment& e) { return e.os; }},
      {"image", [](const environment& e) { return e.image; }},
      {"harness", [](const environment& e) { return e.harness; }},
  };
  return fields;
}

std::vector<std::string> differing_fields(const std::vector<store::stored_run>& runs) {
  std::vector<std::string> out;
  for (const auto& f : env_fields()) {
    const std::string first = f.value(runs.front().document.env);
    bool differs =
        std::any_of(runs.begin(), runs.end(), [&](const auto& r) { return f.value(r.document.env) != first; });
    if (differs) out.emplace_back(f.name);
  }
  return out;
}

std::string field_value(const environment& e, std::string_view name) {
  for (const auto& f : env_fields()) {
    if (f.name == name) return f.value(e);
  }
  return "";
}

std::vector<store::stored_run> load_runs(store::database& db, const std::vector<std::int64_t>& run_ids) {
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
  return runs;
}

void check_prices(const std::vector<store::stored_run>& runs, const std::map<std::string, double>& prices) {
  for (const auto& priced : prices) {
    const std::string& env_id = priced.first;
    bool used = std::any_of(runs.begin(), runs.end(), [&](const auto& r) { return r.summary.env_id == env_id; });
    if (!used) {
      throw error(errc::bad_input,
                  "prices: environment \"" + env_id.substr(0, 80) + "\" is not one of the compared runs' environments");
    }
  }
}

std::vector<compare_row> compare_rows(const std::vector<compare_run>& runs,
                                      const std::vector<store::stored_run>& stored) {
  std::map<config_key, std::vector<store::run_number>> numbers;
  for (std::size_t i = 0; i < stored.size(); ++i) {
    for (const auto& res : stored[i].document.results) {
      auto& row = numbers[res.key()];
      row.resize(stored.size());
      row[i] = number_of(res);
    }
  }
  std::vector<compare_row> out;
  for (auto& [key, row] : numbers) {
    row.resize(stored.size());
    compare_row r{key, {}};
    for (std::size_t i = 0; i < row.size(); ++i) {
      compare_cell cell;
      cell.number = row[i];
      if (auto ratio = ratio_of(row[i], row[0])) {
        cell.ratio = ratio->ratio;
        // The first run against itself is exactly 1: no interval to draw.
        cell.ratio_lo = i == 0 ? std::optional<double>(1.0) : ratio->lo;
        cell.ratio_hi = i == 0 ? std::optional<double>(1.0) : ratio->hi;
      }
      // Items per hour = batch / (ms / 1000) * 3600; cost per million items = price / items per hour * 1e6.
      if (row[i].ms && runs[i].price_per_hour && key.batch > 0) {
        cell.cost_per_million = *runs[i].price_per_hour * *row[i].ms / (3.6 * static_cast<double>(key.batch));
      }
      r.cells.push_back(std::move(cell));
    }
    out.push_back(std::move(r));
  }
  return out;
}

bj::value opt(const std::optional<double>& v) { return v ? bj::value(*v) : bj::value(nullptr); }

}  // namespace

compare_view compare_data(store::database& db, const std::vector<std::int64_t>& run_ids,
                          const std::map<std::string, double>& prices) {
  auto stored = load_runs(db, run_ids);
  check_prices(stored, prices);
  compare_view v;
  v.project = stored.front().summary.project;
  for (const auto& r : stored) {
    compare_run c;
    const auto& s = r.summary;
    c.run = {std::to_string(s.id), s.commit, s.branch,     s.base_branch,
             s.pull_request,       s.env_id, s.created_at, s.baseline};
    c.env = r.document.env;
    if (auto price = prices.find(s.env_id); price != prices.end()) c.price_per_hour = price->second;
    v.runs.push_back(std::move(c));
  }
  v.differing_fields = differing_fields(stored);
  v.configs = compare_rows(v.runs, stored);
  return v;
}

bj::object to_json(const compare_view& v) {
  bj::array runs;
  for (const auto& r : v.runs) {
    bj::object o{{"id", r.run.id},
                 {"commit", r.run.commit},
                 {"branch", r.run.branch},
                 {"pull_request", r.run.pull_request ? bj::value(*r.run.pull_request) : bj::value(nullptr)},
                 {"env_id", r.run.env_id},
                 {"created_at", r.run.created_at},
                 {"price_per_hour", opt(r.price_per_hour)}};
    bj::object env;
    for (const auto& f : env_fields()) env[f.name] = f.value(r.env);
    o["device"] = r.env.device;
    o["environment"] = std::move(env);
    runs.push_back(std::move(o));
  }
  bj::array configs;
  for (const auto& c : v.configs) {
    bj::object o = key_json(c.key);
    bj::array cells;
    for (const auto& cell : c.cells) {
      bj::object j{{"ratio", opt(cell.ratio)},
                   {"ratio_lo", opt(cell.ratio_lo)},
                   {"ratio_hi", opt(cell.ratio_hi)},
                   {"cost_per_million", opt(cell.cost_per_million)}};
      write_number(j, cell.number);
      cells.push_back(std::move(j));
    }
    o["cells"] = std::move(cells);
    configs.push_back(std::move(o));
  }
  bj::array differing(v.differing_fields.begin(), v.differing_fields.end());
  return {{"project", v.project},
          {"statistic", statistic_description},
          {"reference_run_id", v.runs.empty() ? std::string() : v.runs.front().run.id},
          {"runs", std::move(runs)},
          {"differing_fields", std::move(differing)},
          {"configs", std::move(configs)}};
}

namespace {

// The runs' table: device and cpu, then a column for every other environment field that differs between them.
std::string runs_table(const compare_view& v, const link_style& links) {
  std::vector<std::string> columns{"device", "cpu"};
  for (const auto& f : v.differing_fields) {
    if (f != "device" && f != "cpu") columns.push_back(f);
  }
  std::ostringstream t;
  t << "<table class=\"runs\"><thead><tr><th>run</th><th>environment</th>";
  for (const auto& c : columns) {
    const bool differs = std::find(v.differing_fields.begin(), v.differing_fields.end(), c) != v.differing_fields.end();
    t << "<th" << (differs ? " class=\"differs\"" : "") << ">" << escape_html(c) << "</th>";
  }
  t << "<th>commit</th><th>created</th><th class=\"num\">price per hour</th></tr></thead><tbody>\n";
  for (const auto& r : v.runs) {
    t << "<tr><td>" << link(links.run(r.run.id), escape_html(r.run.id)) << "</td><td><code>"
      << escape_html(r.run.env_id) << "</code></td>";
    for (const auto& c : columns) t << "<td>" << escape_html(field_value(r.env, c)) << "</td>";
    t << "<td><code>" << escape_html(r.run.commit.substr(0, 10)) << "</code></td><td>" << escape_html(r.run.created_at)
      << "</td><td class=\"num\">" << (r.price_per_hour ? "$" + fmt(r.price_per_hour, "%.2f") : std::string("&ndash;"))
      << "</td></tr>\n";
  }
  t << "</tbody></table>";
  return scroll_box(t.str());
}

// One configuration's row: each run's number (with its unstable badge), each ratio to the first (an unstable
// side's ratio is flagged and gets no interval), and the costs.
void ratio_row(std::ostringstream& r, const compare_view& v, const compare_row& c, const link_style& links) {
  r << "<tr><td>" << link(links.config(v.project, c.key), "<code>" + escape_html(c.key.label()) + "</code>") << "</td>";
  for (const auto& cell : c.cells)
    r << "<td class=\"num\">" << fmt(cell.number.ms) << unstable_badge(cell.number) << "</td>";
  for (std::size_t i = 1; i < c.cells.size(); ++i) {
    const auto& cell = c.cells[i];
    const bool unstable = cell.number.unstable || c.cells[0].number.unstable;
    r << "<td class=\"num\">" << fmt(cell.ratio, "%.3f", "&times;");
    if (unstable && cell.ratio) {
      r << " <span class=\"badge unstable\">&#9888; unstable: no interval</span>";
    } else if (cell.ratio_lo && cell.ratio_hi) {
      r << " <span class=\"ci\">(" << fmt(cell.ratio_lo, "%.3f") << "&ndash;" << fmt(cell.ratio_hi, "%.3f")
        << ")</span>";
    }
    r << "</td>";
  }
  for (std::size_t i = 0; i < v.runs.size() && i < c.cells.size(); ++i) {
    if (v.runs[i].price_per_hour) r << "<td class=\"num\">" << fmt(c.cells[i].cost_per_million, "$%.4g") << "</td>";
  }
  r << "</tr>\n";
}

// Every unstable number of the comparison, with its reason: what the badges in the table stand for.
std::string unstable_list(const compare_view& v) {
  std::ostringstream os;
  for (const auto& c : v.configs) {
    for (std::size_t i = 0; i < c.cells.size() && i < v.runs.size(); ++i) {
      if (!c.cells[i].number.unstable) continue;
      os << "<li>" << unstable_folded("run " + v.runs[i].run.id + ", " + c.key.label() + ": ", c.cells[i].number)
         << "</li>";
    }
  }
  if (os.str().empty()) return "";
  return "<div class=\"banner unstable\"><p>&#9888; <strong>Unstable runs</strong>: their processes disagree, so "
         "their time and any ratio to it are not one number to compare; measure them again.</p><ul>" +
         os.str() + "</ul></div>\n";
}

}  // namespace

page compare_page(const compare_view& v, const link_style& links) {
  std::ostringstream os;
  os << "<p class=\"crumbs\">" << (links.report ? "" : "<a href=\"/\">projects</a> / ")
     << link(links.project(v.project), escape_html(v.project)) << " / hardware comparison</p>\n";
  os << "<h1>Hardware comparison</h1>\n" << runs_table(v, links);
  std::string ids;
  std::string prices;
  for (const auto& r : v.runs) {
    ids += (ids.empty() ? "" : ",") + r.run.id;
    if (r.price_per_hour) prices += (prices.empty() ? "" : ",") + r.run.env_id + ":" + fmt(r.price_per_hour, "%g");
  }
  if (!links.report) {
    os << "<form class=\"controls\" method=\"get\"><input type=\"hidden\" name=\"runs\" value=\"" << escape_html(ids)
       << "\"><label>prices (ENV_ID:USD per hour, comma-separated) <input name=\"prices\" size=\"60\" value=\""
       << escape_html(prices) << "\"></label> <button type=\"submit\">cost per million items</button></form>\n";
  }
  os << unstable_list(v);
  std::ostringstream r;
  r << "<table class=\"ratios\"><thead><tr><th>configuration</th>";
  for (const auto& run : v.runs) r << "<th class=\"num\">run " << escape_html(run.run.id) << " ms</th>";
  for (std::size_t i = 1; i < v.runs.size(); ++i) {
    r << "<th class=\"num\">run " << escape_html(v.runs[i].run.id) << " / first (95%)</th>";
  }
  for (const auto& run : v.runs) {
    if (run.price_per_hour) r << "<th class=\"num\">run " << escape_html(run.run.id) << " $ per M items</th>";
  }
  r << "</tr></thead><tbody>\n";
  for (const auto& c : v.configs) ratio_row(r, v, c, links);
  r << "</tbody></table>";
  os << "<div class=\"chart-box\"><canvas class=\"compare-chart\" aria-label=\"time relative to the first run\">"
        "</canvas></div>\n"
     << scroll_box(r.str())
     << "<p class=\"legend\">Times are the verdict's statistic: " << escape_html(statistic_description)
     << ". Bars start at 1.0 (the first run's time): up is slower, down is faster; the whisker is the ratio's 95% "
        "interval, from the two runs' intervals combined in log space (none for an unstable run). Cost per million "
        "items = price per hour &times; ms per call / (3.6 &times; batch).</p>\n";
  return {page_kind::compare, "hardware comparison", "compare", os.str(), to_json(v)};
}

}  // namespace rnx::pages
