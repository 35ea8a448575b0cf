// Renderings of a verdict's explanations: folded Markdown and terminal text, every name escaped as data.
#include "rnx/common/explanation_report.hpp"

#include "rnx/common/explanation.hpp"
#include "rnx/common/text.hpp"

#include <cstdio>
#include <sstream>

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

}  // namespace

std::string render_explanations_markdown(const verdict_document& v) {
  std::ostringstream os;
  for (const auto& c : v.configs) {
    if (!c.explanation) continue;
    const explanation& e = *c.explanation;
    os << "\n<details><summary>" << html_escape(title(c)) << " (" << to_string(e.status) << ")</summary>\n\n";
    if (e.status != explain_status::explained) {
      os << markdown_escape(e.note) << "\n\n</details>\n";
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
    os << markdown_escape(window_text(e)) << "\n\n</details>\n";
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
