// rnx::pages: the pages for people (project overview, configuration history, run evidence, hardware comparison)
// as JSON data from the store or from run/verdict files, and as HTML: served by rnx-server, or written by
// `rnx report` as one self-contained file.
//
//   auto data = rnx::pages::history_data(db, project, rnx::pages::parse_config("softmax/eager/float32/b8"), {});
//   rnx::pages::link_style links;                                 // server URLs (/runs/12); report: anchors
//   std::string html = rnx::pages::render_page(rnx::pages::history_page(data, links));
//
// Every value that came from a user (names, branches, messages) is escaped where it is written.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/service/page_views.hpp"
#include "rnx/service/store.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::pages {

namespace bj = boost::json;

inline constexpr int max_compare_runs = 6;
inline constexpr int default_points = 400;  // per environment series of a history chart
inline constexpr int max_points = 2000;
inline constexpr int max_range_days = 3660;  // about ten years: longer from/to spans are refused

// --- input from URLs; each throws rnx::error(bad_input) naming the parameter and what to write ---
// "softmax/eager/float32/b8" (config_key::label()).
config_key parse_config(std::string_view text);

// A store id (a run's, a verdict's) as a path, a query or a request body gives it: 1 to 18 decimal digits, not 0;
// nullopt for anything else.
std::optional<std::int64_t> parse_positive_id(std::string_view text);
// A date (2026-12-01) or an RFC 3339 UTC time (2026-12-01T10:00:00Z), normalised to RFC 3339.
std::string parse_time(std::string_view text, std::string_view parameter);
// "1,2,3": 2 to max_compare_runs distinct run ids.
std::vector<std::int64_t> parse_run_list(std::string_view text);
// "ENV_ID:USD_PER_HOUR,..." ; a price is a finite number > 0 and < 1e6.
std::map<std::string, double> parse_prices(std::string_view text);

struct history_query {
  std::optional<std::string> env_id;
  std::optional<std::string> from;  // RFC 3339, inclusive
  std::optional<std::string> to;    // exclusive
  int points = default_points;
};
// Checks the points bound and that the range is ordered and at most max_range_days long.
void validate(const history_query& q);

// --- data: the JSON behind each page (also served under /api/v1/...) ---
// not_found (naming the thing) for an unknown environment, configuration or run.
overview_view overview_data(store::database& db, const store::project_info& project);
history_view history_data(store::database& db, const store::project_info& project, const config_key& key,
                          const history_query& q);
// Every run's number on every page is the run statistic the verdict compares (stats::run_statistic; a run page's
// judged sides carry the verdict's own base_ms / head_ms), with the run's unstable flag and reason beside it.
run_view run_data(store::database& db, std::int64_t run_id);
// From documents alone (rnx report with files, the gate's report.html): base and verdict may be null.
run_view run_data(const run_document& head, const std::string& head_id, const run_document* base,
                  const std::string& base_id, const verdict_document* verdict);
compare_view compare_data(store::database& db, const std::vector<std::int64_t>& run_ids,
                          const std::map<std::string, double>& prices);
// The landing page's projects: every public one, plus the project of `token_project` (the caller's token), by name.
bj::object landing_data(store::database& db, const std::optional<std::string>& token_project);

// Keeps at most `target` of `medians` (first, last, every index in `keep`, and per bucket the lowest and highest),
// so a chart of thousands of runs still shows every spike. Returns sorted indices.
std::vector<std::size_t> downsample(const std::vector<double>& medians, const std::vector<bool>& keep,
                                    std::size_t target);

// --- HTML ---
// Where links point: rnx-server URLs, or anchors inside one report file (only to pages it holds).
struct link_style {
  bool report = false;
  std::vector<std::string> anchors;  // report: the anchors present
  std::string project(std::string_view name) const;
  std::string config(std::string_view project, const config_key& key) const;
  std::string run(std::string_view id) const;  // "" when the report does not hold that run
};

// What a page shows; its name is the data-kind of the page's section, which rnx-pages.js reads.
enum class page_kind { landing, overview, history, run, compare, proof, error };
std::string_view to_string(page_kind k);

struct page {
  page_kind kind = page_kind::error;
  std::string title;
  std::string anchor;  // the section's id in a report
  std::string body;    // HTML
  bj::object data;     // drawn by rnx-pages.js
};

page overview_page(const overview_view& data, const link_style& links);
page history_page(const history_view& data, const link_style& links, bool log_scale);
page run_page(const run_view& data, const link_style& links);
// From an rnx-server's JSON (GET /api/v1/runs/{id}/evidence), as `rnx gate` renders a stored run's page.
page run_page(const bj::object& data, const link_style& links);
page compare_page(const compare_view& data, const link_style& links);
page proof_page(const proof_view& data);
// A place an error page sends people back to: an href on this server and its text (both escaped when written).
struct way_back {
  std::string href;
  std::string text;
};
// Every error page links to the list of projects ("/"), then to `back` (a project's overview, a run).
page error_page(int status, std::string_view message, const std::vector<way_back>& back = {});
// The pages an error on `path` (its segments) with `query` can send people back to: the project's overview under
// /projects/NAME/..., each run of a refused /compare?runs=...; the list of projects is always added by error_page.
std::vector<way_back> ways_back(const std::vector<std::string>& path, const std::map<std::string, std::string>& query);
page landing_page(const bj::object& data);

// --- the change of one configuration, as the run page and `rnx report` both show it ---
// "+12.3%" (signed, one decimal) for a head/base ratio of 1.123; "-4.0%" for 0.96.
std::string signed_percent(double ratio);
// "+12.3% (95%: +10.1% to +14.6%)", or without the interval when there is none; "" without a ratio.
std::string change_text(std::optional<double> ratio, std::optional<double> ci_lo, std::optional<double> ci_hi);
// A small inline SVG: the band 1 ± rope shaded, a line at 1.0, the 95% interval as a bar and the ratio as a dot,
// on a log axis of the ratio symmetric around 1.0 that holds the band and the interval, at most 10x either way (a
// change cannot go below -100%); an interval clipped by it ends in an arrow. "" without a ratio. Every text in it
// is escaped.
std::string ratio_band_svg(std::optional<double> ratio, std::optional<double> ci_lo, std::optional<double> ci_hi,
                           double rope, std::string_view decision);

// A small inline SVG bar: how much of the limit a time reaches (`fraction` of the peak of its bound, drawn up to 100%
// and marked past it), labelled "62% mem" or "45% flop". "" without a fraction.
std::string headroom_svg(std::optional<double> fraction, bool compute_bound, double error = 0,
                         bool elementwise = false);

// A whole HTML document served by rnx-server: assets from /assets/.
std::string render_page(const page& p);
// One self-contained file: every page as a section, the chart library, script and style inlined.
std::string render_report(const std::vector<page>& pages, std::string_view title);

// Pages of a project for a report: the overview, the history of every configuration in the newest run (or
// `run_id`), and that run's evidence. not_found for an unknown project or run.
std::vector<page> report_pages(store::database& db, const store::project_info& project,
                               std::optional<std::int64_t> run_id);
// The run a report shows: `run_id` where given (not_found unless it is the project's), else the project's newest.
std::int64_t reported_run(store::database& db, const store::project_info& project, std::optional<std::int64_t> run_id);

// The embedded assets (chart.min.js, rnx-pages.js, rnx-pages.css): nullopt for any other name.
struct asset {
  std::string_view content_type;
  std::string_view body;
};
std::optional<asset> find_asset(std::string_view name);

std::string escape_html(std::string_view text);

// `next` when it is a path on this server, to redirect to after sign-in: a relative reference (parsed, no scheme,
// no authority) that starts with one "/" followed by neither "/" nor "\\", with no control character, space,
// backslash or non-ASCII byte anywhere (browsers drop or rewrite those: "/\t/evil" becomes "//evil"). nullopt
// otherwise.
std::optional<std::string> same_origin_path(std::string_view next);
// A JSON text that is safe inside <script type="application/json"> ("<" written as \u003c).
std::string script_json(const bj::value& v);

}  // namespace rnx::pages
