// The run page's explanations as HTML: what changed between base and head under the profiler, and the counts.
#include "pages_explain.hpp"

#include "pages_parts.hpp"

#include "rnx/common/explanation.hpp"

#include <cmath>
#include <sstream>

namespace rnx::pages {

using namespace parts;

namespace {

std::string signed_percent(std::optional<double> fraction) {
  if (!fraction) return "&ndash;";
  if (*fraction == 0) return "unchanged";
  return fmt(100 * *fraction, "%+.1f", "%");
}

std::string share_cell(double share) {
  if (share > 0) return fmt(100 * share, "%.0f", "% of the added time");
  if (share < 0) return fmt(-100 * share, "%.0f", "% of the time saved");
  return "&ndash;";
}

// A count as people read it: whole counts in full (4194304 bytes), fractions of a call to four digits.
std::string count_cell(std::optional<double> v) {
  if (!v) return "&ndash;";
  return fmt(v, std::fabs(*v - std::round(*v)) < 1e-9 ? "%.0f" : "%.4g");
}

std::string changes_table(const explanation& e) {
  if (e.changes.empty()) return "<p>No operator or kernel changed between base and head.</p>\n";
  std::ostringstream t;
  t << "<table class=\"explain-table\"><thead><tr><th>operator or kernel</th><th>change</th><th class=\"num\">calls a "
       "call, base</th><th class=\"num\">head</th><th class=\"num\">ms a call, base</th><th class=\"num\">head</th>"
       "<th class=\"num\">share</th></tr></thead><tbody>\n";
  for (const auto& c : e.changes) {
    t << "<tr><td><code>" << escape_html(c.name) << "</code></td><td>" << to_string(c.kind) << "</td><td class=\"num\">"
      << fmt(c.base_calls, "%.4g") << "</td><td class=\"num\">" << fmt(c.head_calls, "%.4g")
      << "</td><td class=\"num\">" << fmt(c.base_ms, "%.4g") << "</td><td class=\"num\">" << fmt(c.head_ms, "%.4g")
      << "</td><td class=\"num\">" << share_cell(c.share) << "</td></tr>\n";
  }
  t << "</tbody></table>";
  return scroll_box(t.str());
}

std::string counts_table(const explanation& e) {
  std::ostringstream t;
  std::size_t rows = 0;
  t << "<table class=\"count-table\"><thead><tr><th>count a call</th><th class=\"num\">base</th><th class=\"num\">head"
       "</th><th class=\"num\">change (exact)</th></tr></thead><tbody>\n";
  for (const auto& c : e.counts) {
    if (!c.base && !c.head) continue;
    ++rows;
    t << "<tr><td>" << escape_html(std::string(count_label(c.kind))) << "</td><td class=\"num\">" << count_cell(c.base)
      << "</td><td class=\"num\">" << count_cell(c.head) << "</td><td class=\"num\">" << signed_percent(c.change())
      << "</td></tr>\n";
  }
  t << "</tbody></table>";
  return rows == 0 ? "" : scroll_box(t.str());
}

void explanation_block(std::ostringstream& os, const config_verdict& c) {
  const explanation& e = *c.explanation;
  const bool open = c.result == decision::slower || c.result == decision::abstain;
  os << "<details class=\"explain\"" << (open ? " open" : "") << "><summary><code>" << escape_html(c.key.label())
     << "</code> " << chip(to_string(c.result)) << " " << escape_html(std::string(to_string(e.status)))
     << "</summary>\n";
  if (e.status == explain_status::explained) {
    os << changes_table(e) << counts_table(e);
    os << "<p class=\"legend\">Under the profiler (" << escape_html(e.profiler) << ", ranked by "
       << escape_html(e.ranked_by) << ", " << e.profiled_calls << " calls a side): base " << fmt(e.base_ms, "%.4g")
       << " ms, head " << fmt(e.head_ms, "%.4g") << " ms a call. Profiling took " << fmt(e.cost_s, "%.1f")
       << " s. A count moved where it changed by more than " << fmt(100 * e.count_threshold, "%g", "%") << ".</p>\n";
  }
  if (!e.note.empty()) os << "<p class=\"explain-note\">" << escape_html(e.note) << "</p>\n";
  os << "</details>\n";
}

}  // namespace

std::string explanation_section(const run_view& v) {
  if (!v.verdict) return "";
  std::ostringstream os;
  for (const auto& c : v.verdict->configs) {
    if (c.explanation) explanation_block(os, c);
  }
  if (os.str().empty()) return "";
  return "<h2>Why the time moved</h2>\n<p class=\"legend\">Base and head of each explained configuration run once more "
         "under the profiler, untimed, each in its own worker process; what changed between them, added and removed "
         "operators (or GPU kernels) first, then by the time a call they moved; share: of the time the head added "
         "(or saved). The counts beside the time are exact and do not jitter; the profiler's own times carry its "
         "overhead and never change a decision.</p>\n" +
         os.str();
}

}  // namespace rnx::pages
