// Rendering of `rnx bisect`'s findings: terminal text, Markdown for GitHub, and rnx.bisect/v1 JSON.
#include "bisect_report.hpp"

#include "rnx/common/text.hpp"

#include <boost/json.hpp>

#include <cstdio>
#include <sstream>

namespace rnx::gate {

namespace bj = boost::json;

namespace {

std::string short_sha(const std::string& sha) { return sha.substr(0, 12); }

std::string percent(double ratio) {
  char out[32];
  std::snprintf(out, sizeof out, "%+.2f%%", 100 * (ratio - 1));
  return out;
}

std::string interval(const step_estimate& e) {
  char out[64];
  std::snprintf(out, sizeof out, "[%+.2f%%, %+.2f%%]", 100 * (e.lo - 1), 100 * (e.hi - 1));
  return out;
}

std::string how(const step_estimate& e) { return e.measured ? (e.reused ? "reused" : "paired run") : "inferred"; }

std::string summary_line(const bisect_findings& f) {
  const auto& o = f.outcome;
  const std::size_t n = f.setup.commits.size();
  std::ostringstream s;
  s << f.key.label() << " between " << short_sha(f.setup.commits.front().sha) << " and "
    << short_sha(f.setup.commits.back().sha) << " (" << n - 1 << " commit" << (n == 2 ? "" : "s")
    << "): " << percent(o.whole.ratio) << " " << interval(o.whole) << ", " << to_string(o.whole_call) << "; "
    << o.culprits.size() << " culprit" << (o.culprits.size() == 1 ? "" : "s") << " in " << o.paired_runs
    << " paired run" << (o.paired_runs == 1 ? "" : "s");
  if (o.reused_runs) s << " (+" << o.reused_runs << " reused)";
  return s.str();
}

}  // namespace

std::string render_bisect_text(const bisect_findings& f) {
  const auto& commits = f.setup.commits;
  std::ostringstream out;
  out << "rnx bisect: " << terminal_safe(summary_line(f)) << "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-12s    %-12s  %9s  %-20s %9s  %-9s  %s\n", "base", "head", "change",
                "95% interval", "P(step)", "call", "how");
  out << "\n" << line;
  for (const auto& c : f.outcome.comparisons) {
    std::snprintf(line, sizeof line, "%-12s .. %-12s  %9s  %-20s %9.3f  %-9s  %s\n",
                  short_sha(commits[c.base].sha).c_str(), short_sha(commits[c.head].sha).c_str(),
                  percent(c.estimate.ratio).c_str(), interval(c.estimate).c_str(), c.estimate.p_slower,
                  std::string(to_string(c.call)).c_str(), how(c.estimate).c_str());
    out << line;
  }
  if (f.outcome.culprits.empty()) {
    out << "\nno commit of the range made " << terminal_safe(f.key.label()) << " slower by more than "
        << 100 * f.setup.policy.rope << "% at P >= " << f.setup.policy.probability << "\n";
    return out.str();
  }
  out << "\nculprits (each against its parent):\n";
  for (const auto& c : f.outcome.culprits) {
    const auto& r = commits[c.index];
    out << "  " << short_sha(r.sha) << " " << percent(c.size.ratio) << " " << interval(c.size)
        << (c.call == step_call::uncertain ? " (uncertain: leans slower without reaching the probability)" : "") << "  "
        << terminal_safe(r.subject, false) << "\n"
        << "    repro (in a checkout of " << short_sha(r.sha)
        << "): " << terminal_safe(repro_command(f.setup, f.key, commits[c.index - 1].sha), false) << "\n";
  }
  return out.str();
}

std::string render_bisect_markdown(const bisect_findings& f) {
  const auto& commits = f.setup.commits;
  std::ostringstream out;
  out << "### rnx bisect\n\n" << markdown_escape(summary_line(f)) << "\n\n";
  if (f.outcome.culprits.empty()) {
    out << "No commit of the range made it slower by more than " << 100 * f.setup.policy.rope << "%.\n";
  } else {
    out << "| commit | change | 95% interval | P(step) | subject |\n|---|---|---|---|---|\n";
    for (const auto& c : f.outcome.culprits) {
      const auto& r = commits[c.index];
      char p[32];
      std::snprintf(p, sizeof p, "%.3f", c.size.p_slower);
      out << "| " << markdown_code(short_sha(r.sha)) << " | " << percent(c.size.ratio) << " | " << interval(c.size)
          << " | " << p << " | " << markdown_escape(r.subject) << " |\n";
    }
    out << "\nRepro, in a checkout of each culprit:\n\n";
    for (const auto& c : f.outcome.culprits) {
      out << "- " << markdown_code(short_sha(commits[c.index].sha)) << ": "
          << markdown_code(repro_command(f.setup, f.key, commits[c.index - 1].sha)) << "\n";
    }
  }
  out << "\n<details><summary>" << f.outcome.comparisons.size() << " comparisons</summary>\n\n"
      << "| base | head | change | 95% interval | call | how |\n|---|---|---|---|---|---|\n";
  for (const auto& c : f.outcome.comparisons) {
    out << "| " << markdown_code(short_sha(commits[c.base].sha)) << " | "
        << markdown_code(short_sha(commits[c.head].sha)) << " | " << percent(c.estimate.ratio) << " | "
        << interval(c.estimate) << " | " << to_string(c.call) << " | " << how(c.estimate) << " |\n";
  }
  out << "\n</details>\n";
  return out.str();
}

bj::value bisect_json(const bisect_findings& f) {
  const auto& commits = f.setup.commits;
  auto estimate = [](const step_estimate& e) {
    return bj::object{{"ratio", e.ratio},       {"ci95", bj::array{e.lo, e.hi}},
                      {"p_slower", e.p_slower}, {"measured", e.measured},
                      {"reused", e.reused},     {"evidence", e.evidence}};
  };
  bj::array range;
  for (const auto& r : commits) range.push_back(bj::object{{"commit", r.sha}, {"subject", r.subject}});
  bj::array comparisons;
  for (const auto& c : f.outcome.comparisons) {
    bj::object o = estimate(c.estimate);
    o["base"] = commits[c.base].sha;
    o["head"] = commits[c.head].sha;
    o["call"] = to_string(c.call);
    comparisons.push_back(std::move(o));
  }
  bj::array culprits;
  for (const auto& c : f.outcome.culprits) {
    bj::object o = estimate(c.size);
    o["commit"] = commits[c.index].sha;
    o["parent"] = commits[c.index - 1].sha;
    o["subject"] = commits[c.index].subject;
    o["call"] = to_string(c.call);
    o["repro"] = repro_command(f.setup, f.key, commits[c.index - 1].sha);
    culprits.push_back(std::move(o));
  }
  return bj::object{
      {"schema", "rnx.bisect/v1"},
      {"configuration",
       bj::object{
           {"kernel", f.key.kernel}, {"runtime", f.key.runtime}, {"dtype", f.key.dtype}, {"batch", f.key.batch}}},
      {"threshold", f.setup.policy.rope},
      {"probability", f.setup.policy.probability},
      {"range", std::move(range)},
      {"whole", estimate(f.outcome.whole)},
      {"whole_call", to_string(f.outcome.whole_call)},
      {"comparisons", std::move(comparisons)},
      {"culprits", std::move(culprits)},
      {"paired_runs", f.outcome.paired_runs},
      {"reused_runs", f.outcome.reused_runs},
      {"seconds", f.seconds}};
}

}  // namespace rnx::gate
