// Renderings of a verdict's explanations: folded Markdown and terminal text, every name escaped as data.
#include "rnx/common/explanation_report.hpp"

#include "rnx/common/explanation.hpp"
#include "rnx/common/text.hpp"

#include <cstdio>
#include <sstream>
#include <vector>

namespace rnx {

namespace {

std::string format(const char* f, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, f, v);
  return buffer;
}

// "base 0.0912 ms, head 0.1831 ms a call under the profiler (10 calls a side, self CPU time; 2.4 s)"
std::string window_text(const explanation& e) {
  return "base " + format("%.4g", e.base_ms) + " ms, head " + format("%.4g", e.head_ms) +
         " ms a call under the profiler (" + std::to_string(e.profiled_calls) + " calls a side, ranked by " +
         e.ranked_by + "; " + e.profiler + "; profiling took " + format("%.1f", e.cost_s) + " s)";
}

std::string title(const config_verdict& c) { return "Why " + std::string(to_string(c.result)) + ": " + c.key.label(); }

std::string percent_text(double fraction) { return format("%+.1f%%", 100 * fraction); }

}  // namespace

std::string counts_reason(decision d, const explanation& e) {
  if (e.status != explain_status::explained) return "";
  std::vector<const count_change*> known;
  for (const auto& c : e.counts) {
    if (executed_count(c.kind) && c.base && c.head) known.push_back(&c);
  }
  if (known.empty()) return "";
  const std::string threshold = format("%g%%", 100 * e.count_threshold);
  if (d == decision::abstain && e.counts_moved) {
    std::string which;
    for (const auto* c : known) {
      if (!count_moved(*c, e.count_threshold)) continue;
      const auto change = c->change();
      which += (which.empty() ? "" : ", ") + std::string(count_label(c->kind)) + " " +
               (change ? percent_text(*change) : std::string("from none"));
    }
    return "the time abstains, but a count of work moved by more than " + threshold + " (" + which +
           "): the head does different work";
  }
  if (d == decision::slower && !e.counts_moved) {
    std::string which;
    for (const auto* c : known) which += (which.empty() ? "" : ", ") + std::string(count_label(c->kind));
    return "slower, yet no count of work moved by more than " + threshold + " (" + which +
           "): a clock, placement or contention change rather than more work";
  }
  return "";
}

void attach_explanation(config_verdict& c, explanation e) {
  const std::string why = counts_reason(c.result, e);
  if (!why.empty()) {
    if (e.note.find(why) == std::string::npos) e.note = e.note.empty() ? why : why + "; " + e.note;
    if (c.reason.find(why) == std::string::npos) c.reason = c.reason.empty() ? why : c.reason + "; " + why;
  }
  c.explanation = std::move(e);
}

std::string render_explanations_markdown(const verdict_document& v) {
  std::ostringstream os;
  for (const auto& c : v.configs) {
    if (!c.explanation) continue;
    const explanation& e = *c.explanation;
    os << "\n<details><summary>" << html_escape(title(c)) << " (" << to_string(e.status) << ")</summary>\n\n";
    if (e.status != explain_status::explained) {
      os << markdown_escape(e.note) << "\n\n</details>\n\n";
      continue;
    }
    const auto lines = top_lines(e, explanation_lines_shown);
    if (lines.empty()) os << "No operator or kernel changed between base and head.\n";
    for (std::size_t i = 0; i < lines.size(); ++i) os << i + 1 << ". " << markdown_escape(lines[i]) << "\n";
    os << "\n";
    const auto counts = count_lines(e);
    if (!counts.empty()) {
      os << "Counts a call, exact:";
      for (const auto& line : counts) os << " " << markdown_escape(line) << ";";
      os << "\n\n";
    }
    if (!e.note.empty()) os << markdown_escape(e.note) << "\n\n";
    os << markdown_escape(window_text(e)) << "\n\n</details>\n\n";
  }
  return os.str();
}

std::string render_explanations_text(const verdict_document& v) {
  std::ostringstream os;
  for (const auto& c : v.configs) {
    if (!c.explanation) continue;
    const explanation& e = *c.explanation;
    os << "\n" << terminal_safe(title(c), false) << " (" << to_string(e.status) << ")\n";
    if (e.status != explain_status::explained) {
      os << "  " << terminal_safe(e.note, false) << "\n";
      continue;
    }
    const auto lines = top_lines(e, explanation_lines_shown);
    if (lines.empty()) os << "  no operator or kernel changed between base and head\n";
    for (std::size_t i = 0; i < lines.size(); ++i)
      os << "  " << i + 1 << ". " << terminal_safe(lines[i], false) << "\n";
    for (const auto& line : count_lines(e)) os << "  count: " << terminal_safe(line, false) << "\n";
    if (!e.note.empty()) os << "  " << terminal_safe(e.note, false) << "\n";
    os << "  " << terminal_safe(window_text(e), false) << "\n";
  }
  return os.str();
}

}  // namespace rnx
