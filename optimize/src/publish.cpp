// What an optimize run publishes: the attempts' tables, the proposal's body (pull request, step summary) and commit
// message, the JSON record. Every text a candidate produced passes through published() or without_candidate_text()
// first (publish.hpp).
#include "publish.hpp"

#include "rnx/common/report.hpp"
#include "rnx/common/text.hpp"
#include "rnx/optimize/loop.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/stats/summary.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace rnx::optimize {

namespace bj = boost::json;

namespace detail {

std::string fixed(double v, int digits) {
  char b[64];
  std::snprintf(b, sizeof b, "%.*f", digits, v);
  return b;
}

std::vector<secret_value> own_secrets() { return environment_secrets(credential_name); }

bj::value results_json(const std::vector<run_result>& results) {
  bj::array out;
  for (const auto& r : results) {
    bj::object o{{"runtime", r.runtime},
                 {"dtype", r.dtype},
                 {"batch", r.batch},
                 {"device", r.device},
                 {"status", std::string(to_string(r.status))},
                 {"samples", static_cast<std::int64_t>(r.samples_ms.size())}};
    if (!r.samples_ms.empty()) {
      o["median_ms"] = stats::median(r.samples_ms);
      o["min_ms"] = *std::min_element(r.samples_ms.begin(), r.samples_ms.end());
    }
    if (!r.message.empty()) o["message"] = r.message;
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace detail

namespace {

using detail::fixed;
using detail::own_secrets;
using detail::published_bytes;
using detail::record_bytes;
using detail::results_json;

std::string speedup_cell(const attempt& a) {
  if (!a.speedup) return "-";
  std::string s = fixed(*a.speedup, 2) + "×";
  if (a.p_faster) s += " (P(faster) " + fixed(*a.p_faster, 3) + ")";
  return s;
}

std::string decision_cell(const attempt& a) {
  if (a.kept) return "**kept**";
  if (a.status == attempt_status::faster) return "faster, not best (reverted)";
  if (a.status == attempt_status::rejected || a.status == attempt_status::error) {
    return std::string(to_string(a.status));
  }
  return std::string(to_string(a.status)) + " (reverted)";
}

// A failed audit on a correct candidate is a cheat; on an incorrect one the audit rows mostly echo the wrong
// answer (ignored inputs, precision), so they are reported as failed rather than as cheating.
std::string audit_cell(const attempt& a, const std::string& cheat) {
  if (!a.audit) return "-";
  if (a.clean) return a.review ? "review" : "clean";
  return a.correct ? cheat : "failed";
}

std::string yes_no(const attempt& a, bool v) {
  if (!a.audit) return "-";
  return v ? "yes" : "no";
}

// The result as it may be published: every text that came from a candidate's run or the rewriter (the attempts'
// reasons, the benchmark's reasons, the audit's rows) scanned for secrets and cut to `most` bytes, before any
// renderer escapes it for its target.
optimize_result published(const optimize_result& r, std::size_t most) {
  const std::vector<secret_value> known = own_secrets();
  optimize_result out = r;
  for (auto& a : out.attempts) {
    a.reason = published_excerpt(a.reason, most, known);
    for (auto& c : a.configs) c.reason = published_excerpt(c.reason, most, known);
    if (!a.audit) continue;
    for (auto& row : a.audit->checks) row.detail = published_excerpt(row.detail, most, known);
  }
  return out;
}

// The result with nothing a candidate or the rewriter wrote: every reason and audit detail emptied (the commit
// message's).
optimize_result without_candidate_text(const optimize_result& r) {
  optimize_result out = r;
  for (auto& a : out.attempts) {
    a.reason.clear();
    for (auto& c : a.configs) c.reason.clear();
    if (!a.audit) continue;
    for (auto& row : a.audit->checks) row.detail.clear();
  }
  return out;
}

// The attempts' table of an already published result; the Why column (reasons, which may quote a candidate) only
// when `with_reasons`.
std::string attempts_markdown(const optimize_result& r, bool with_reasons) {
  // A reason may quote the candidate (its exception, its output): a short summary in the cell, the excerpt below.
  markdown_cell_quotes why(200);
  std::ostringstream s;
  s << "| Rewrite | Decision | Correct | Anti-cheat | Speedup (P(faster)) |" << (with_reasons ? " Why |" : "") << "\n";
  s << "| --- | --- | --- | --- | ---: |" << (with_reasons ? " --- |" : "") << "\n";
  for (const auto& a : r.attempts) {
    std::string anti = audit_cell(a, "**cheat**");
    const std::string label = "candidate " + std::to_string(a.index);
    s << "| " << label << " | " << decision_cell(a) << " | " << yes_no(a, a.correct) << " | " << anti << " | "
      << speedup_cell(a) << " |";
    if (with_reasons) s << " " << why.cell(label, a.reason) << " |";
    s << "\n";
  }
  if (const std::string full = why.full_texts("Reasons in full"); !full.empty()) s << "\n" << full;
  return s.str();
}

// The proposal's Markdown over an already published result: the attempts, the kept candidate's benchmark and audit
// tables, the profile.
std::string proposal_markdown(const optimize_result& r, bool with_reasons) {
  std::ostringstream s;
  s << "## rnx optimize: " << markdown_code(r.kernel) << "\n\n";
  if (r.best) {
    const attempt& a = r.attempts[*r.best];
    s << "Candidate " << a.index << " from " << markdown_escape(r.rewriter) << " replaces "
      << markdown_code(r.kernel_file.filename().string())
      << ": it passed the correctness gate and the anti-cheat audit and is faster than the original in a paired "
         "benchmark (Bayesian verdict, ROPE ±"
      << fixed(100 * r.policy.rope, 1) << "%, P >= " << fixed(r.policy.probability, 2) << ").\n\n";
  }
  s << "### Attempts\n\n" << attempts_markdown(r, with_reasons) << "\n";
  if (r.best) {
    const attempt& a = r.attempts[*r.best];
    verdict_document v;
    v.verdict = overall::pass;
    v.policy = r.policy;
    v.configs = a.configs;
    v.reason = "candidate " + std::to_string(a.index) + " (head) against the original (base), one paired run";
    s << "### Benchmark: candidate " << a.index << " against the original\n\n" << render_verdict_markdown(v) << "\n";
    if (a.audit) s << "### Correctness and anti-cheat audit\n\n" << verify::render_markdown(*a.audit) << "\n";
  }
  if (r.profile)
    s << "### Profile of the original\n\n" << render_profile_markdown(*r.profile, 8, {2.0, INFINITY}) << "\n";
  return s.str();
}

}  // namespace

std::string render_attempts_markdown(const optimize_result& result) {
  return attempts_markdown(published(result, published_bytes), true);
}

std::string render_attempts_text(const optimize_result& result) {
  const optimize_result r = published(result, published_bytes);
  std::ostringstream s;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-28s %-8s %-10s %-30s %s\n", "rewrite", "decision", "correct", "anti-cheat",
                "speedup (P(faster))", "why");
  s << line;
  for (const auto& a : r.attempts) {
    std::string anti = audit_cell(a, "CHEAT");
    std::string dec = a.kept ? "KEPT" : decision_cell(a);
    std::snprintf(line, sizeof line, "%-12s %-28s %-8s %-10s %-30s %s\n",
                  ("candidate " + std::to_string(a.index)).c_str(), dec.c_str(), yes_no(a, a.correct).c_str(),
                  anti.c_str(), speedup_cell(a).c_str(), terminal_safe(capped(a.reason, 160), false).c_str());
    s << line;
  }
  if (r.best) {
    s << "\nkept: candidate " << r.attempts[*r.best].index;
    if (r.proposal) s << " -> branch " << r.proposal->branch << " (commit " << r.proposal->commit.substr(0, 12) << ")";
    if (r.pr) s << " -> " << r.pr->html_url;
    s << "\n";
  } else {
    s << "\nnothing kept: no candidate was correct, clean and faster; nothing was written\n";
  }
  s << "record: " << (r.work_dir / "optimize.json").string() << "\n";
  return s.str();
}

std::string proposal_title(const optimize_result& r) {
  if (!r.best) return "rnx optimize: " + r.kernel + " (nothing kept)";
  const attempt& a = r.attempts[*r.best];
  std::string t = "optimize(" + r.kernel + "): " + fixed(a.speedup.value_or(1), 2) + "x faster";
  if (a.p_faster) t += ", P(faster) " + fixed(*a.p_faster, 3);
  return t;
}

std::string render_proposal_body(const optimize_result& result) {
  const optimize_result r = published(result, published_bytes);
  return proposal_markdown(r, true) + "_Produced by " + markdown_code("rnx optimize --kernel " + r.kernel) +
         "; every attempt is recorded in optimize.json. What a candidate printed or raised is quoted in excerpts of at "
         "most " +
         std::to_string(published_bytes) + " bytes, credentials removed._\n";
}

std::string render_commit_message(const optimize_result& result) {
  const optimize_result r = without_candidate_text(result);
  return proposal_title(r) + "\n\n" + proposal_markdown(r, false) +
         "Produced by rnx optimize. A commit never quotes what a candidate printed or raised; the pull request and "
         "optimize.json do, in excerpts with credentials removed.\n";
}

boost::json::value to_json(const optimize_result& result) {
  const optimize_result r = published(result, record_bytes);
  bj::array attempts;
  for (const auto& a : r.attempts) {
    bj::object o{{"index", a.index},   {"status", to_string(a.status)},
                 {"kept", a.kept},     {"correct", a.correct},
                 {"clean", a.clean},   {"review", a.review},
                 {"reason", a.reason}, {"file", a.file.string()},
                 {"source", a.source}};
    o["speedup"] = a.speedup ? bj::value(*a.speedup) : bj::value(nullptr);
    o["p_faster"] = a.p_faster ? bj::value(*a.p_faster) : bj::value(nullptr);
    o["audit"] = a.audit ? bj::value(verify::to_json(*a.audit)) : bj::value(nullptr);
    if (!a.configs.empty()) {
      verdict_document v;
      v.policy = r.policy;
      v.configs = a.configs;
      o["benchmark"] = rnx::to_json(v).as_object().at("configs");
    } else {
      o["benchmark"] = nullptr;
    }
    attempts.push_back(std::move(o));
  }
  bj::object out{{"schema", "rnx.optimize/v1"},           {"kernel", r.kernel},
                 {"kernel_file", r.kernel_file.string()}, {"rewriter", r.rewriter},
                 {"baseline", results_json(r.baseline)},  {"attempts", std::move(attempts)}};
  out["profile"] = r.profile ? to_json(*r.profile, 10, {2.0, INFINITY}) : bj::value(nullptr);
  out["kept"] = r.best ? bj::value(r.attempts[*r.best].index) : bj::value(nullptr);
  if (r.proposal) {
    out["proposal"] = bj::object{{"branch", r.proposal->branch},
                                 {"commit", r.proposal->commit},
                                 {"parent", r.proposal->parent},
                                 {"base_branch", r.proposal->base_branch},
                                 {"path", r.proposal->path_in_repo}};
  } else {
    out["proposal"] = nullptr;
  }
  out["pull_request"] =
      r.pr ? bj::value(bj::object{{"number", r.pr->number}, {"html_url", r.pr->html_url}}) : bj::value(nullptr);
  return out;
}

}  // namespace rnx::optimize
