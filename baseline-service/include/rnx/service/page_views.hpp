// rnx::pages: the typed data of the run and comparison pages, between the store (or documents) and their HTML and
// JSON. A page's renderer reads these structs only; string keys exist where a view is written as JSON (served under
// /api/v1 and embedded for the charts) and read back (`rnx gate` renders a run page from the service's JSON).
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/service/store.hpp"

#include <boost/json/object.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::pages {

// The statistic every page shows for a run, as the JSON names it beside the numbers ("statistic").
inline constexpr std::string_view statistic_description =
    "each worker process's median, geometric mean over the processes (the statistic the verdict compares)";

// A run_number as JSON: stat_ms, stat_lo_ms, stat_hi_ms, unstable, unstable_reason.
void write_number(boost::json::object& out, const store::run_number& n);
store::run_number read_number(const boost::json::object& in);
// "unstable: REASON" (or "unstable" alone) for an unstable number; "" otherwise. A reason that starts with
// "unstable: " itself (the runner's message does) is not prefixed again.
std::string unstable_text(const store::run_number& n);

// unstable_text on one line: up to the list of what each process went through ("[process 1: ...]") and at most
// 160 characters, cut at a word with "..."; the pages show the rest folded under it.
std::string unstable_summary(const store::run_number& n);

// a / b of two run numbers with an approximate 95% interval (the overview's Δ%, the comparison's ratios).
struct ratio_with_interval {
  double ratio = 1;
  std::optional<double> lo;  // absent when either number has no interval or is unstable
  std::optional<double> hi;
};

// Who a run is: a stored run's id, or what `rnx report` and the gate call a run from a file ("local", "base").
struct run_header {
  std::string id;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::optional<std::int64_t> pull_request;
  std::string env_id;
  std::string created_at;
  bool baseline = false;
};

// One side (base or head) of one configuration on the run page.
struct run_side {
  result_status status = result_status::ok;
  std::string message;
  store::run_number number;  // the verdict's base_ms / head_ms where a verdict judged it
  std::int64_t n = 0;
  std::vector<std::vector<double>> processes;  // per worker process, up to 100 evenly spaced order statistics
};

// Where a run's clocks and peaks come from: measured by rnx itself (this rnx gate or rnx bench, on this machine), or
// reported by a run document rnx received (an upload to rnx-server, a server's evidence): a claim, and the pages say
// so.
enum class figure_source { measured, reported };
std::string_view to_string(figure_source source);

// How close a time is to what the machine allows (rnx/common/speed_of_light.hpp): against the run's measured peaks,
// and against the device's datasheet where rnx knows the device.
struct light_figures {
  light_speed measured;
  double error = 0;  // the measured peak's own measurement error (peak_error): within it past 1 is at the peak
  std::optional<double> sheet_fraction;
};
// The head's speed of light at its run number; nullopt without work, peaks or a number.
std::optional<light_figures> light_of(const run_result& r, const environment& env, std::optional<double> ms);

struct run_config_row {
  config_key key;
  std::optional<config_verdict> judged;  // absent without a verdict for this configuration
  std::optional<run_side> head;
  std::optional<run_side> base;
  std::optional<light_figures> light;  // the head's
};

struct base_run_ref {
  std::string id;
  std::string commit;
  std::string created_at;
  std::string env_id;
};

struct run_view {
  std::string project;
  run_header run;
  environment env;
  std::optional<verdict_document> verdict;
  std::optional<store::verdict_kind> verdict_kind;  // how the stored verdict came to be; absent from files
  double rope = gate_policy{}.rope;
  std::vector<run_config_row> configs;
  std::optional<base_run_ref> base_run;
  std::optional<store::baseline_record> baseline_record;  // whether this run is a baseline now, and how
  figure_source figures = figure_source::measured;        // the peaks its speed of light is set against
};

boost::json::object to_json(const run_view& v);
// Reads what to_json wrote (an rnx-server's /api/v1/runs/{id}/evidence); absent fields stay empty.
run_view run_view_from_json(const boost::json::object& o);

// A speed-of-light page for one run (`rnx report --proof`): every configuration's work, achieved rates and fraction
// of the peaks, sorted from nearest the limit to farthest. Published only for a run whose numbers can carry such a
// claim (proof_refusals).
struct proof_row {
  config_key key;
  double ms = 0;  // the run statistic
  work_info work;
  achieved_rates rates;
  light_figures light;
};

struct proof_view {
  std::string project;
  run_header run;
  environment env;
  std::optional<datasheet> sheet;
  std::vector<proof_row> rows;
  std::vector<config_key> without_light;            // measured, but no work or no peak to set it against
  figure_source figures = figure_source::measured;  // whether rnx measured the clocks and peaks, or a document says so
};

// What a run needs for a speed-of-light page, as the page and its refusal say it first.
inline constexpr std::string_view proof_requirements =
    "A run qualifies for this page when its numbers can carry a claim about the machine: measured by rnx bench on a "
    "CUDA device whose clocks were queried and found locked and held still while it sampled, every timed call "
    "started with the L2 flushed, and the machine's peaks measured. A CPU run cannot qualify: rnx flushes no CPU "
    "cache, so a working set that fits in the cache is timed from it and reads past the copy's peak (a fraction "
    "of the memory's peak that says nothing of the memory), and a CPU's clocks are seldom lockable or queryable.";

// Why a run cannot back a speed-of-light claim, each reason with its fix; empty when it can: its clocks were queried
// and found locked (environment.clocks.locked), the SM clock held still while it sampled, every measured result was
// timed with the L2 flushed before each call, and the machine's peaks were measured.
std::vector<std::string> proof_refusals(const run_document& run);
// The page's data; `invalid` naming every refusal when proof_refusals is not empty.
// `figures`: reported for a document rnx did not measure itself (an upload).
proof_view proof_data(const run_document& run, const std::string& id, figure_source figures = figure_source::measured);
boost::json::object to_json(const proof_view& v);

// One run of a hardware comparison, with its environment.
struct compare_run {
  run_header run;
  environment env;
  std::optional<double> price_per_hour;
};

// One configuration's number in one compared run, and its ratio to the first run's.
struct compare_cell {
  store::run_number number;
  std::optional<double> ratio;     // this run's statistic / the first run's
  std::optional<double> ratio_lo;  // its 95% interval; absent when either side is unstable (no interval to trust)
  std::optional<double> ratio_hi;
  std::optional<double> cost_per_million;
};

struct compare_row {
  config_key key;
  std::vector<compare_cell> cells;  // one per compared run, in the runs' order
};

struct compare_view {
  std::string project;
  std::vector<compare_run> runs;
  std::vector<compare_row> configs;
  // The environment fields whose values differ between the runs (device, cpu, threads, torch, ...): the page
  // shows a column for each, so that two environments never look identical.
  std::vector<std::string> differing_fields;
};

boost::json::object to_json(const compare_view& v);

// How a configuration's newest baseline compares with the one before it, against the rope (the overview's trend).
enum class trend_kind { slower, faster, flat };
std::string_view to_string(trend_kind t);
std::optional<trend_kind> trend_kind_from_string(std::string_view name);

struct overview_environment {
  std::string env_id;
  std::string device;
  std::string cpu;
  std::int64_t n_runs = 0;
  std::string last_run_at;
  std::int64_t newest_run_id = 0;
};

// One configuration's decision in one stored verdict.
struct overview_decision {
  std::int64_t run_id = 0;
  std::string env_id;
  decision result = decision::abstain;
  std::optional<double> ratio;
  std::string change;  // change_text of the verdict
};

struct overview_baseline {
  std::int64_t run_id = 0;
  baseline_kind source = baseline_kind::push;
  std::string created_at;
  store::run_number number;
};

// A configuration in one environment: its newest baseline of the base branch, the change from the one before,
// the sparkline of the base branch's baselines (oldest first) and this environment's recent decisions.
struct overview_series {
  std::string env_id;
  std::optional<overview_baseline> baseline;
  std::optional<trend_kind> trend;
  std::optional<ratio_with_interval> change;
  std::vector<overview_baseline> recent;
  std::vector<overview_decision> verdicts;
};

struct overview_config {
  config_key key;
  std::vector<overview_series> series;
  std::vector<overview_decision> verdicts;  // every environment's
};

struct overview_verdict {
  std::int64_t run_id = 0;
  overall verdict = overall::pass;
  std::string reason;
  bool paired = false;
  std::string branch;
  std::string commit;
  std::optional<std::int64_t> pull_request;
  std::string env_id;
  std::string created_at;
  std::map<decision, std::int64_t> counts;
};

struct overview_view {
  std::string project;
  bool is_public = false;
  double rope = gate_policy{}.rope;
  std::string base_branch;  // the branch whose baselines the configurations show
  std::vector<overview_environment> environments;
  std::vector<overview_config> configs;
  std::vector<overview_verdict> verdicts;
};

boost::json::object to_json(const overview_view& v);

// One run of a configuration's history chart.
struct history_point_view {
  std::int64_t run_id = 0;
  std::string t;  // created_at
  std::int64_t n = 0;
  baseline_kind baseline = baseline_kind::unknown;  // unknown: not a baseline
  bool accepted_slowdown = false;                   // accepted as the baseline, and slower in this configuration
  std::string branch;
  std::string commit;
  std::optional<std::int64_t> pull_request;
  store::run_number number;
};

// The baseline in force from a baseline run on (the chart's step line).
struct baseline_step {
  std::int64_t run_id = 0;
  std::string t;
  double ms = 0;
};

struct history_series_view {
  std::string env_id;
  std::string device;
  std::int64_t colour = 0;  // the environment's index in the project: the same with any filter
  std::int64_t n_total = 0;
  std::vector<history_point_view> points;     // downsampled
  std::vector<baseline_step> baseline_steps;  // every one, never thinned
};

struct accepted_slowdown {
  std::int64_t run_id = 0;
  std::string env_id;
  std::string t;
  std::string accepted_by;
  std::string reason;
};

struct history_view {
  std::string project;
  bool is_public = false;
  config_key key;
  std::optional<std::string> env_id;  // the range asked for
  std::optional<std::string> from;
  std::optional<std::string> to;
  int points = 0;
  double rope = gate_policy{}.rope;
  std::vector<history_series_view> series;
  std::vector<accepted_slowdown> accepted;
  std::vector<store::change_record> changes;  // the configuration's change points in the range (docs/drift.md)
};

boost::json::object to_json(const history_view& v);

}  // namespace rnx::pages
