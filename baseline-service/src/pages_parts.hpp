// The small HTML pieces every page's renderer shares (pages_html.cpp): numbers, links, chips, boxes, anchors.
// Each escapes what it is given unless its name says the argument is HTML already.
#pragma once

#include "rnx/service/pages.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace rnx::pages::parts {

// printf-formatted number with a suffix; "&ndash;" when absent.
std::string fmt(std::optional<double> v, const char* format = "%.4g", std::string_view suffix = "");
// 0.042 -> "4.2%"; "&ndash;" when absent.
std::string percent(std::optional<double> v);
// An <a> around text_html (already HTML); text_html alone without an href.
std::string link(const std::string& href, const std::string& text_html);
// A decision's chip; "none" for an empty name.
std::string chip(std::string_view decision);
// A table that may be wider than its page: it scrolls inside its own box, never the page.
std::string scroll_box(const std::string& table_html);
// An id attribute and its fragment from any text: [A-Za-z0-9-] kept, anything else as _XX (unique, URL-safe).
std::string anchor_of(std::string_view prefix, std::string_view text);
// The first 12 characters of an env_id.
std::string short_env(std::string_view env_id);
// "PASS reason" as the page's banner.
std::string verdict_banner(std::string_view overall, std::string_view reason);
// The machine in words, each fact once: the device, then the CPU unless the device names it already (a CPU run's
// device is "cpu: MODEL"), then a CPU model's vendor word only once ("AMD EPYC AMD EPYC 7763" reads as one).
std::string machine_text(std::string_view device, std::string_view cpu);
// How a project gets its first run: what an empty project and an empty landing page say.
std::string upload_help(std::string_view project);
// A warning badge for an unstable number, its reason in the title; "" for a stable one.
std::string unstable_badge(const store::run_number& n);

// An unstable number's reason as one line (unstable_summary) after `label`, the whole of it folded beneath in a
// <details> when there is more; "" for a stable one.
std::string unstable_folded(const std::string& label, const store::run_number& n);

}  // namespace rnx::pages::parts

// The data side's shared pieces (pages_data.cpp, pages_run.cpp, pages_compare.cpp, pages_overview.cpp).
namespace rnx::pages {

// The band of practical equivalence the project's gate uses: the newest stored verdict's rope, else the default.
double project_rope(store::database& db, std::int64_t project_id);

// {"config", "kernel", "runtime", "dtype", "batch"} of a configuration.
boost::json::object key_json(const config_key& k);
// A run's number for one configuration from its result: the run statistic (stats::run_statistic) and the
// result's unstable flag and reason.
store::run_number number_of(const run_result& r);
// What a stored verdict says overall, as the pages show it: a run stored as the first baseline of its branch says
// what it is instead of "no baseline yet".
std::string shown_reason(const verdict_document& v, const std::optional<store::baseline_record>& record,
                         const store::run_summary& run);
// Its overall answer, as the gate gave it: the first baseline of a branch is PASS (WARN as stored: nothing compared).
overall shown_overall(const verdict_document& v, const std::optional<store::baseline_record>& record);

// A speed of light as JSON: {"fraction", "ideal_ms", "bound": "compute" | "memory", "peak_error", "beyond_peak",
// "sheet_fraction"}.
boost::json::object light_json(const light_figures& l);

// a / b of two run numbers with an approximate 95% interval: their intervals combined in log space, each side's
// distance from its number added in quadrature. nullopt when either has no positive number.
std::optional<ratio_with_interval> ratio_of(const store::run_number& a, const store::run_number& b);

}  // namespace rnx::pages
