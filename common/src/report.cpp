// Text and Markdown renderings of verdict documents.
#include "rnx/common/report.hpp"

#include "rnx/common/explanation_report.hpp"

#include "rnx/common/text.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace rnx {

namespace {

std::string fixed(const std::optional<double>& v, int digits) {
  if (!v) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, *v);
  return buffer;
}

// `mark` follows the time of a side measured unstable (its processes disagree: no one number).
std::string time_ms(const std::optional<double>& v, bool unstable = false, const char* mark = "") {
  if (!v) return "-";
  return unstable ? format_ms(*v) + mark : format_ms(*v);
}

bool any_unstable(const verdict_document& v) {
  return std::any_of(v.configs.begin(), v.configs.end(),
                     [](const auto& c) { return c.base_unstable || c.head_unstable; });
}

std::string ratio_cell(const config_verdict& c) {
  if (!c.ratio) return "-";
  std::string s = fixed(c.ratio, 3);
  if (c.ci_lo && c.ci_hi) s += " [" + fixed(c.ci_lo, 3) + ", " + fixed(c.ci_hi, 3) + "]";
  return s;
}

// The minimum detectable effect as a slowdown in percent ("+4.1%").
std::string mde_cell(const config_verdict& c) {
  if (!c.mde) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "+%.1f%%", 100 * *c.mde);
  return buffer;
}

std::string statistic_name(const verdict_document& v) { return std::string(to_string(v.policy.stat)); }

bool any_in_process(const verdict_document& v) {
  return std::any_of(v.configs.begin(), v.configs.end(),
                     [](const auto& c) { return c.pairing == pairing_mode::in_process; });
}

// What the base and head columns and the ratio are: the statistic the verdict itself compares (stats/), which for
// samples from several worker processes is not the median of all samples pooled.
std::string statistic_legend(const verdict_document& v) {
  const std::string s = statistic_name(v);
  std::string text = "Base and head " + s + ": the " + s +
                     " of each worker process's samples, geometric mean over the processes (one process: the " + s +
                     " of all its samples), the statistic the verdict compares.";
  if (any_in_process(v)) {
    text += " Ratio of a paired in-process configuration: the geometric mean over processes of the " + s +
            " per-block head/base ratio, not head over base of those columns.";
  } else {
    text += " Ratio: head over base of it.";
  }
  return text;
}

std::string rule_text(const verdict_document& v) {
  std::ostringstream os;
  os << "faster/slower only when P >= " << v.policy.probability << " that the " << statistic_name(v)
     << " ratio lies outside ±" << v.policy.rope * 100 << "% (" << v.policy.resamples
     << "-draw Bayesian bootstrap, at least " << v.policy.min_samples
     << " samples a side): a one-sided rule, so a slower's interval shown (two-sided, 95%) may reach below "
     << 1 + v.policy.rope << " while its " << 100 * (1 - v.policy.probability) << "% quantile lies above it";
  // Paired runs that added processes look by look decided under an alpha-spending schedule over their looks, said
  // here once rather than in every configuration's reason.
  const auto split = std::find_if(v.configs.begin(), v.configs.end(), [](const auto& c) { return c.threshold; });
  if (split != v.configs.end()) {
    os << "; processes were added one look at a time until decided, under an alpha-spending schedule over the looks "
          "(earlier looks need more, so stopping early keeps the error rate of one look at "
       << v.policy.probability << "): the last look needed P >= " << fixed(split->threshold, 4);
  }
  return os.str();
}

}  // namespace

std::string format_ms(double ms) {
  char buffer[64];
  // Four significant digits for microsecond kernels and second-long ones alike, trailing zeros kept: a time of
  // 1.000 ms is not written "1", as if it were a count or rounded.
  std::snprintf(buffer, sizeof buffer, "%#.4g", ms);
  std::string out = buffer;
  if (!out.empty() && out.back() == '.') out.pop_back();
  return out;
}

std::string render_verdict_text(const verdict_document& v) {
  std::ostringstream os;
  // Names, commits and reasons come from run documents and manifests: printed as data (terminal_safe).
  os << "rnx verdict: " << to_string(v.verdict) << " - " << terminal_safe(v.reason) << "\n";
  if (v.baseline) {
    os << "baseline: run " << terminal_safe(v.baseline->id, false) << " (commit "
       << (v.baseline->commit.empty() ? "unknown" : terminal_safe(v.baseline->commit, false)) << ")\n";
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-44s %10s %10s  %-24s %9s %7s  %s\n", "configuration",
                ("base " + statistic_name(v)).c_str(), ("head " + statistic_name(v)).c_str(), "ratio [95% CI]",
                "P(slower)", "MDE", "decision");
  os << line;
  for (const auto& c : v.configs) {
    std::snprintf(line, sizeof line, "%-44s %10s %10s  %-24s %9s %7s  %s", terminal_safe(c.key.label(), false).c_str(),
                  time_ms(c.base_ms, c.base_unstable, "!").c_str(), time_ms(c.head_ms, c.head_unstable, "!").c_str(),
                  ratio_cell(c).c_str(), fixed(c.p_slower, 3).c_str(), mde_cell(c).c_str(),
                  std::string(to_string(c.result)).c_str());
    os << line;
    if (!c.reason.empty()) os << "  (" << terminal_safe(c.reason, false) << ")";
    os << "\n";
  }
  if (!v.configs.empty()) os << statistic_legend(v) << "\nRule: " << rule_text(v) << ".\n";
  if (any_unstable(v)) os << "!: measured unstable (its processes disagree): the time is no one number.\n";
  os << render_explanations_text(v);
  return os.str();
}

std::string render_verdict_markdown(const verdict_document& v) {
  std::ostringstream os;
  os << "### rnx: **" << to_string(v.verdict) << "**\n\n" << markdown_escape(v.reason) << "\n\n";
  if (v.baseline) {
    // Everything from a run document is escaped: a commit or a kernel name is data, never Markdown.
    os << "Baseline: run " << markdown_code(v.baseline->id) << " at "
       << (v.baseline->commit.empty() ? "an unknown commit" : "commit " + markdown_code(v.baseline->commit));
    if (!v.baseline->created_at.empty()) os << " (" << markdown_escape(v.baseline->created_at) << ")";
    os << ".\n\n";
  }
  os << "| Configuration | Base " << statistic_name(v) << " (ms) | Head " << statistic_name(v)
     << " (ms) | Ratio [95% CI] | P(slower) | MDE | Decision |\n";
  os << "|---|---:|---:|---|---:|---:|---|\n";
  for (const auto& c : v.configs) {
    os << "| " << markdown_code(c.key.label()) << " | " << time_ms(c.base_ms, c.base_unstable, " \u26a0") << " | "
       << time_ms(c.head_ms, c.head_unstable, " \u26a0") << " | " << ratio_cell(c) << " | " << fixed(c.p_slower, 3)
       << " | " << mde_cell(c) << " | " << to_string(c.result);
    if (!c.reason.empty()) os << ": " << markdown_escape(c.reason);
    os << " |\n";
  }
  os << "\n"
     << statistic_legend(v) << "\n\nRule: " << rule_text(v)
     << ". MDE: the smallest slowdown this run could have called slower.\n";
  if (any_in_process(v)) {
    os << "Paired in-process: base and head alternated in the same worker processes; the ratio is over per-block "
          "head/base ratios.\n";
  }
  if (any_unstable(v)) os << "\u26a0: measured unstable (its processes disagree): the time is no one number.\n";
  os << render_explanations_markdown(v);
  return os.str();
}

}  // namespace rnx
