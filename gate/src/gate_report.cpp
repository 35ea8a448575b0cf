// Step summary, outputs, annotations, PR comment and commit status of a gate verdict.
#include "gate_report.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/speed_of_light.hpp"
#include "rnx/common/text.hpp"
#include "rnx/service/pages.hpp"
#include "rnx/stats/posterior.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

namespace rnx::gate {

namespace {

std::string fixed3(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.3f", v);
  return buffer;
}

std::string config_evidence(const config_verdict& c) {
  std::string text = c.key.label() + " is " + std::string(to_string(c.result));
  if (c.ratio) {
    text += ": head/base " + fixed3(*c.ratio);
    if (c.ci_lo && c.ci_hi) text += " (95% interval " + fixed3(*c.ci_lo) + " to " + fixed3(*c.ci_hi) + ")";
  }
  if (c.p_slower) text += ", P(slower) = " + fixed3(*c.p_slower);
  // The same signed percentage and interval as the run page and report.html (rnx::pages::change_text).
  if (auto change = pages::change_text(c.ratio, c.ci_lo, c.ci_hi); !change.empty()) text += ", change " + change;
  if (!c.reason.empty()) text += "; " + c.reason;
  return text;
}

// A history label inside the ``` block: one line, no backtick (a run of them would close the block early).
std::string code_block_line(std::string_view text) {
  std::string out = terminal_safe(text, false);
  std::replace(out.begin(), out.end(), '`', '\'');
  return out;
}

// The evidence link only for a plain http(s) URL; anything that could end the link or start markup is left out.
bool linkable(std::string_view url) {
  if (url.substr(0, 7) != "http://" && url.substr(0, 8) != "https://") return false;
  for (unsigned char ch : url) {
    if (ch <= 0x20 || ch >= 0x7f || ch == '(' || ch == ')' || ch == '<' || ch == '>' || ch == '[' || ch == ']' ||
        ch == '"' || ch == '\'' || ch == '`' || ch == '\\') {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<light_row> light_rows(const run_document& head) {
  std::vector<light_row> rows;
  for (const auto& r : head.results) {
    if (r.status != result_status::ok || r.samples_ms.empty()) continue;
    const auto ms = stats::observed_statistic({r.samples_ms, r.groups}, statistic::median);
    const auto light = pages::light_of(r, head.env, ms);
    if (!light) continue;
    light_row row{r.key().label(), light_text(light->measured, light->error), "", light->measured.fraction};
    if (light->sheet_fraction) {
      row.sheet =
          light_text({0, *light->sheet_fraction, light->measured.compute_bound, "", light->measured.elementwise});
    }
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const light_row& a, const light_row& b) { return a.fraction > b.fraction; });
  return rows;
}

std::string render_light_markdown(const std::vector<light_row>& rows, const std::string& datasheet) {
  if (rows.empty()) return "";
  std::ostringstream os;
  os << "<details><summary>Speed of light: the head against this machine's peaks</summary>\n\n"
     << "| configuration | of the measured peak |" << (datasheet.empty() ? "" : " of the datasheet |") << "\n|---|---:|"
     << (datasheet.empty() ? "" : "---:|") << "\n";
  for (const auto& row : rows) {
    os << "| " << markdown_code(row.config) << " | " << row.measured << " |"
       << (datasheet.empty() ? "" : " " + (row.sheet.empty() ? std::string("-") : row.sheet) + " |") << "\n";
  }
  os << "\n" << light_legend;
  if (!datasheet.empty()) os << "; datasheet: " << markdown_escape(datasheet);
  os << ".\n\n</details>\n\n";
  return os.str();
}

std::string render_light_text(const std::vector<light_row>& rows, const std::string& datasheet) {
  if (rows.empty()) return "";
  std::size_t width = 0;
  std::size_t measured_width = 0;
  for (const auto& row : rows) {
    width = std::max(width, row.config.size());
    measured_width = std::max(measured_width, row.measured.size());
  }
  std::ostringstream os;
  os << "speed of light of the head, nearest the limit first (of the measured peak"
     << (datasheet.empty() ? "" : "; of the datasheet") << "):\n";
  for (const auto& row : rows) {
    os << "  " << terminal_safe(row.config, false) << std::string(width - row.config.size() + 2, ' ') << row.measured;
    if (!row.sheet.empty()) os << std::string(measured_width - row.measured.size() + 2, ' ') << row.sheet;
    os << "\n";
  }
  os << light_legend;
  if (!datasheet.empty()) os << "; datasheet: " << datasheet;
  os << ".\n";
  return os.str();
}

std::string text_sparkline(const std::vector<double>& values) {
  static const char* const blocks[] = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};
  if (values.empty()) return {};
  auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  std::string out;
  for (double v : values) {
    // A flat history sits in the middle rather than on the floor, so it does not read as "fell".
    int level = *hi > *lo ? static_cast<int>(std::lround((v - *lo) / (*hi - *lo) * 7)) : 3;
    out += blocks[std::clamp(level, 0, 7)];
  }
  return out;
}

std::string comment_marker(std::string_view key) {
  std::string clean;
  // The key comes from the job name or a flag; keep it from closing the HTML comment.
  for (char ch : terminal_safe(key, false)) {
    clean += (ch == '-' && !clean.empty() && clean.back() == '-') || ch == '>' ? '_' : ch;
  }
  return "<!-- rnx-gate key=" + clean + " -->";
}

std::string render_report(const verdict_document& verdict, const report_facts& facts) {
  std::ostringstream os;
  if (!facts.lead.empty()) {
    // "no verdict: ..." / "verdict not stored: ...": the first thing anyone reads, never a footnote.
    const std::size_t colon = facts.lead.find(": ");
    os << "**" << markdown_escape(facts.lead.substr(0, colon))
       << "**: " << markdown_escape(facts.lead.substr(colon + 2)) << "\n\n";
  }
  if (verdict.configs.empty() && !facts.lead.empty() && verdict.reason == facts.lead) {
    os << "### rnx: **" << to_string(verdict.verdict) << "**\n\n";
  } else if (verdict.configs.empty()) {
    // Nothing was compared (the store was down, or the run was empty): an empty table says nothing.
    os << "### rnx: **" << to_string(verdict.verdict) << "**\n\n" << markdown_escape(verdict.reason) << "\n\n";
  } else {
    os << render_verdict_markdown(verdict) << "\n";
  }
  if (verdict.verdict == overall::block && !facts.accept_hint.empty()) os << "> " << facts.accept_hint << "\n\n";
  os << render_light_markdown(facts.light, facts.datasheet);
  // A note quotes errors of other programs and servers: data, escaped.
  if (!facts.note.empty()) os << "> Note: " << markdown_escape(facts.note) << "\n\n";
  if (linkable(facts.run_url)) {
    os << "[Evidence for this run](" << facts.run_url
       << "): every configuration's samples per worker process, base beside head.\n\n";
  }
  if (!facts.history.empty()) {
    std::size_t width = 0;
    for (const auto& [label, values] : facts.history) width = std::max(width, code_block_line(label).size());
    os << "<details><summary>Recent history (the base branch's baselines, oldest to newest: each one's statistic as "
          "the verdict compares it)</summary>\n\n```\n";
    for (const auto& [label, values] : facts.history) {
      if (values.empty()) continue;
      std::string line = code_block_line(label);
      os << line << std::string(width - line.size() + 2, ' ') << text_sparkline(values) << "  "
         << format_ms(values.back()) << " ms\n";
    }
    os << "```\n\n</details>\n\n";
  }
  os << "<sub>";
  std::vector<std::string> parts;
  parts.push_back(facts.commit.empty() ? "commit unknown" : "commit " + markdown_code(facts.commit.substr(0, 12)));
  if (!facts.run_id.empty()) parts.push_back("run " + markdown_code(facts.run_id));
  if (!facts.mode.empty()) parts.push_back("mode " + markdown_escape(facts.mode));
  if (!verdict.env_id.empty()) parts.push_back("environment " + markdown_code(verdict.env_id));
  if (!facts.runner_label.empty()) parts.push_back("thresholds of runner " + markdown_code(facts.runner_label));
  if (!facts.backend.empty()) parts.push_back(markdown_escape(facts.backend));
  for (std::size_t i = 0; i < parts.size(); ++i) os << (i ? " · " : "") << parts[i];
  os << "</sub>\n";
  return os.str();
}

std::string accept_hint(const accept_route& route) {
  if (route.run_id.empty()) return {};
  if (route.pull_request_event && !route.embedded) {
    return "If this slowdown is intended, someone with write access can comment `/rnx accept <reason>` to make "
           "this run the new baseline.";
  }
  if (route.pull_request_event) {
    return "If this slowdown is intended: this run is in the embedded store of this job's cache, which a "
           "`/rnx accept` comment cannot reach (that needs the service, `[service] url`). Merged anyway, the push "
           "build stores the merged code as the new baseline.";
  }
  const std::string where = route.embedded ? "--store " + route.location : "--service-url " + route.location;
  return "If this slowdown is intended, make this run the new baseline: `rnx accept --run-id " + route.run_id + " " +
         where + " --reason \"...\"`.";
}

std::string render_comment(const verdict_document& verdict, const report_facts& facts, std::string_view marker) {
  return std::string(marker) + "\n" + render_report(verdict, facts);
}

std::string escape_command_data(std::string_view text) {
  std::string out;
  // Escape sequences and control characters never reach the log (terminal_safe); newlines are the command's own.
  for (char ch : terminal_safe(text, true)) {
    switch (ch) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string escape_command_property(std::string_view text) {
  std::string out;
  for (char ch : escape_command_data(text)) {
    switch (ch) {
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out += ch;
    }
  }
  return out;
}

std::vector<std::string> annotations(const verdict_document& verdict, const report_facts& facts) {
  std::vector<std::string> lines;
  if (!facts.lead.empty()) {
    const std::string headline = facts.lead.substr(0, facts.lead.find(": "));
    lines.push_back("::" + std::string(facts.lead_is_error ? "error" : "warning") +
                    " title=" + escape_command_property("rnx: " + headline) + "::" + escape_command_data(facts.lead));
  }
  // report_only turned a BLOCK into WARN: the evidence stays, as warnings instead of errors.
  const std::string level = verdict.verdict == overall::block ? "error" : "warning";
  for (const auto& c : verdict.configs) {
    if (c.result != decision::slower && c.result != decision::broken) continue;
    lines.push_back("::" + level + " title=" + escape_command_property("rnx: " + c.key.label()) +
                    "::" + escape_command_data(config_evidence(c)));
  }
  if (verdict.verdict != overall::pass && (facts.lead.empty() || verdict.reason != facts.lead)) {
    lines.push_back("::" + std::string(verdict.verdict == overall::block ? "error" : "warning") +
                    " title=" + escape_command_property("rnx " + std::string(to_string(verdict.verdict))) +
                    "::" + escape_command_data(verdict.reason));
  }
  return lines;
}

std::pair<std::string, std::string> commit_status(const verdict_document& verdict) {
  // WARN is "success": it must not block a merge (a down service or a new kernel is no regression).
  std::string state = verdict.verdict == overall::block ? "failure" : "success";
  return {state, std::string(to_string(verdict.verdict)) + ": " + terminal_safe(verdict.reason, false)};
}

void write_report_file(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error(errc::usage, "cannot write " + path.string() + "; pass --out-dir with a writable folder");
}

void append_file(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  if (out) out << text;
  if (!out) {
    throw error(errc::usage, "cannot append to " + path + " (" + std::strerror(errno) +
                                 "); GITHUB_STEP_SUMMARY / GITHUB_OUTPUT must name writable files");
  }
}

std::string format_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::random_device device;
  std::mt19937_64 generator(device());
  std::string text;
  for (const auto& [name, value] : outputs) {
    std::string delimiter;
    do {
      char buffer[40];
      std::snprintf(buffer, sizeof buffer, "rnx_%016llx", static_cast<unsigned long long>(generator()));
      delimiter = buffer;
    } while (value.find(delimiter) != std::string::npos);
    text.append(name).append("<<").append(delimiter).append("\n").append(value);
    if (value.empty() || value.back() != '\n') text += "\n";
    text += delimiter + "\n";
  }
  return text;
}

void write_outputs(const std::string& path, const std::vector<std::pair<std::string, std::string>>& outputs) {
  append_file(path, format_outputs(outputs));
}

}  // namespace rnx::gate
