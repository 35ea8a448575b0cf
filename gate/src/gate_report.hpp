// How the gate tells people and GitHub its answer: step summary, step outputs, workflow annotations,
// the PR comment body and the commit status.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rnx::gate {

// A configuration's speed of light as the report writes it: the head's time against the machine's peaks.
struct light_row {
  std::string config;
  std::string measured;  // "62% mem" against environment.peaks
  std::string sheet;     // the same against the device's datasheet; "" where rnx does not know the device
  double fraction = 0;   // of the measured peak, for the order
};
// The rows of every measured head configuration with a speed of light, nearest the limit first.
std::vector<light_row> light_rows(const run_document& head);
// What the rows' figures are, under every rendering of them.
inline constexpr std::string_view light_legend =
    "The time the head's work of one call (counted over the eager reference, or declared) takes at the peak of its "
    "bound, over its median: flop against the dtype's matrix product, mem against a device copy, both measured on "
    "this machine (environment.peaks)";
// The rows as a folded Markdown table (the step summary, the PR comment, rnx compare --format markdown) and as
// terminal text (rnx compare); "" without rows. `datasheet` names where the second figure comes from ("" = none).
std::string render_light_markdown(const std::vector<light_row>& rows, const std::string& datasheet);
std::string render_light_text(const std::vector<light_row>& rows, const std::string& datasheet);

// What the report says besides the verdict itself.
struct report_facts {
  std::string mode;   // to_string(gate_mode): "stored", "paired" or "confirmed"
  std::string event;  // "pull_request", "push", "local", ...
  std::string commit;
  std::string run_id;        // "" when the run was not stored
  std::string backend;       // "service http://..." / "embedded store ..." / ""
  std::string runner_label;  // the [gate.runners] label in force, "" for [gate]
  std::string note;          // e.g. why the history upload failed in paired mode
  // The report's first line when the service could not be used ("no verdict: WHY; the service URL ...; fix: ..."),
  // also an annotation: an error where [gate] on_service_error = "fail" (lead_is_error), else a warning.
  std::string lead;
  bool lead_is_error = false;
  std::string accept_hint;  // on BLOCK: how an intended slowdown becomes the baseline here ("" = not offered)
  std::string run_url;      // the run's evidence page on rnx-server; "" when no service URL is known
  // The verdict's statistic per configuration over the base branch's baselines, oldest first, drawn as text
  // sparklines under the table.
  std::vector<std::pair<std::string, std::vector<double>>> history;
  std::vector<light_row> light;
  std::string datasheet;  // where the sheet column's figures come from; "" without one
};

// Where a blocked run is stored, for the advice on accepting it.
struct accept_route {
  bool pull_request_event = false;  // a pull_request event in GitHub Actions (the comment flow exists)
  bool embedded = false;            // the embedded store rather than rnx-server
  std::string location;             // the store's path or the service's URL
  std::string run_id;
};
// The command that accepts the run in the mode in use: a `/rnx accept` comment with a service; `rnx accept --store`
// for the embedded store outside GitHub; on a pull request's embedded store (a cache of its own job, which the
// comment workflow cannot restore) what to do instead. "" when the run was not stored.
std::string accept_hint(const accept_route& route);

// "▁▃▅█"-style: one block character per value, scaled between the smallest and the largest; "" for no values.
std::string text_sparkline(const std::vector<double>& values);

// The hidden marker that finds the gate's own PR comment again ("<!-- rnx-gate key=... -->").
std::string comment_marker(std::string_view key);

// The Markdown report: the evidence table (rnx::render_verdict_markdown) and a footer of facts.
std::string render_report(const verdict_document& verdict, const report_facts& facts);
// The PR comment: marker + report.
std::string render_comment(const verdict_document& verdict, const report_facts& facts, std::string_view marker);

// `::error title=...::message` lines for every slower/broken configuration and the overall answer; first, where the
// service could not be used, `::warning title=rnx: no verdict::LEAD` (`::error` when lead_is_error), and then no
// second line for an overall answer whose reason is that same lead.
std::vector<std::string> annotations(const verdict_document& verdict, const report_facts& facts = {});
// Escapes a workflow command's message (%, CR, LF) or property (also ':' and ',').
std::string escape_command_data(std::string_view text);
std::string escape_command_property(std::string_view text);

// GitHub commit status state and description (<= 140 characters) for a verdict.
std::pair<std::string, std::string> commit_status(const verdict_document& verdict);

// Writes `text` to `path` (an --out-dir file: verdict.json, report.md, report.html), creating its folder; throws
// rnx::error(usage) naming the file and --out-dir when it cannot.
void write_report_file(const std::filesystem::path& path, const std::string& text);
// Appends to a GITHUB_STEP_SUMMARY file; throws rnx::error(usage) naming the file when it cannot.
void append_file(const std::string& path, std::string_view text);
// Appends `name<<DELIMITER ... DELIMITER` entries to a GITHUB_OUTPUT file; the delimiter is random and
// never occurs in a value, so a report cannot end the entry early and set other outputs.
void write_outputs(const std::string& path, const std::vector<std::pair<std::string, std::string>>& outputs);
std::string format_outputs(const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace rnx::gate
