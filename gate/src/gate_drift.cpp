// The drift budget: anchor lookup, the head against the anchor's stored run (and, through the gate's callback,
// against the anchor's commit measured paired), and the history's step-to-step blame.
#include "gate_drift.hpp"

#include "git_command.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/text.hpp"
#include "rnx/stats/verdict.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <sstream>

namespace rnx::gate {

namespace bj = boost::json;

std::string_view to_string(drift_method m) { return m == drift_method::paired ? "paired" : "stored"; }

std::optional<drift_method> drift_method_from_string(std::string_view s) {
  return enum_from_name(s, {drift_method::stored, drift_method::paired});
}

namespace {

constexpr int history_limit = 200;  // baselines read back while looking for the anchor
constexpr int blame_steps = 50;     // newest steps of the history the blame walks

// `now` minus `days`, as RFC 3339 UTC (created_at strings compare in time order).
std::string days_before(const std::string& now, int days) {
  std::tm tm{};
  if (std::sscanf(now.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                  &tm.tm_sec) != 6) {
    return {};
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t t = timegm(&tm) - static_cast<std::time_t>(days) * 86400;
  std::tm out{};
  gmtime_r(&t, &out);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &out);
  return text;
}

struct anchor_choice {
  std::optional<std::size_t> index;  // into the history, newest first
  std::string label;
  std::string missing;  // why there is none
};

anchor_choice find_anchor(const std::vector<stored_run_ref>& history, const drift_request& r) {
  const drift_anchor& a = r.settings.anchor;
  anchor_choice c;
  if (a.kind == anchor_kind::tag) {
    auto tags = git(r.repo_dir, {"tag", "--list", a.tag_glob, "--merged", "HEAD", "--sort=-creatordate"});
    if (!tags || tags->empty()) {
      c.missing = "no tag matching " + a.tag_glob + " is in the head's history";
      return c;
    }
    std::istringstream lines(*tags);
    for (std::string tag; std::getline(lines, tag);) {
      auto sha = git(r.repo_dir, {"rev-parse", "--verify", "--quiet", tag + "^{commit}"});
      if (!sha) continue;
      for (std::size_t i = 0; i < history.size(); ++i) {
        if (history[i].commit == *sha) {
          c.index = i;
          c.label = "tag " + tag;
          return c;
        }
      }
    }
    c.missing = "no tag matching " + a.tag_glob + " has a stored baseline of " + r.base_branch +
                " in this environment (store one: run rnx gate on the tagged commit of " + r.base_branch + ")";
    return c;
  }
  if (a.kind == anchor_kind::days) {
    const std::string cutoff = days_before(r.now, a.days);
    for (std::size_t i = 0; i < history.size(); ++i) {
      if (!cutoff.empty() && history[i].created_at <= cutoff) {
        c.index = i;
        c.label =
            "the baseline of " + history[i].created_at.substr(0, 10) + " (" + std::to_string(a.days) + " days back)";
        return c;
      }
    }
    if (!history.empty()) {
      c.index = history.size() - 1;
      c.label = "the oldest stored baseline, " + history.back().created_at.substr(0, 10) +
                " (the history is shorter "
                "than " +
                std::to_string(a.days) + " days)";
      return c;
    }
    c.missing = "no stored baseline of " + r.base_branch + " in this environment";
    return c;
  }
  for (std::size_t i = 0; i < history.size(); ++i) {
    if (history[i].baseline_source == baseline_kind::accepted) {
      c.index = i;
      c.label = "the accepted baseline of " + history[i].created_at.substr(0, 10);
      return c;
    }
  }
  c.missing = "no accepted baseline of " + r.base_branch +
              " in this environment (or the backend cannot tell accepted "
              "baselines apart: rnx-server lists pushed ones only; use anchor = \"tag:...\" or \"days:N\" there)";
  return c;
}

// The steps from the anchor to the head for one configuration: each stored baseline against the one before it.
void blame(drift_config& config, const std::vector<run_document>& chain, const std::vector<std::string>& ids,
           const gate_policy& policy) {
  gate_policy any = policy;
  any.rope = 1e-6;  // "slower at all": the blame asks where the time went, not whether each step passed the band
  for (std::size_t i = 1; i < chain.size(); ++i) {
    run_document before = chain[i - 1];
    run_document after = chain[i];
    auto only = [&](run_document& d) {
      std::erase_if(d.results, [&](const run_result& x) { return !(x.key() == config.key); });
    };
    only(before);
    only(after);
    const verdict_document v = stats::judge_runs(before, after, any, 1);
    if (v.configs.empty() || !v.configs.front().ratio) continue;
    const config_verdict& c = v.configs.front();
    drift_step s;
    s.commit = chain[i].commit;
    s.run_id = ids[i];
    s.ratio = *c.ratio;
    s.lo = c.ci_lo.value_or(s.ratio);
    s.hi = c.ci_hi.value_or(s.ratio);
    s.p_slower = c.p_slower.value_or(0);
    s.blamed = c.result == decision::slower;
    if (s.blamed) config.blamed_commits.push_back(s.commit);
    config.steps.push_back(std::move(s));
  }
}

std::string percent(double ratio) {
  char out[32];
  std::snprintf(out, sizeof out, "%+.2f%%", 100 * (ratio - 1));
  return out;
}

std::string interval(double lo, double hi) {
  char out[64];
  std::snprintf(out, sizeof out, "[%+.2f%%, %+.2f%%]", 100 * (lo - 1), 100 * (hi - 1));
  return out;
}

// One configuration's comparison with the anchor, from a verdict judged with the budget as the band; none when the
// verdict has no ratio (a configuration missing or broken on one side).
std::optional<drift_config> from_verdict(const config_verdict& c, drift_method method) {
  if (!c.ratio || !c.ci_lo || !c.ci_hi) return std::nullopt;
  drift_config d;
  d.key = c.key;
  d.method = method;
  d.result = c.result;
  d.ratio = *c.ratio;
  d.lo = *c.ci_lo;
  d.hi = *c.ci_hi;
  d.p_over = c.p_slower.value_or(0);
  return d;
}

// Whether a configuration's stored comparison is measured again paired: undecided, or over budget (a flag must not
// rest on two runs made days apart on a machine whose speed moves between them; docs/drift.md, measured here).
bool measure_again(const drift_config& d) { return d.result == decision::abstain || d.result == decision::slower; }

// The configurations the stored comparison left undecided or called over budget, measured again beside the
// anchor's commit through the gate's callback and judged with the budget as the band; their paired decision
// replaces the stored one. Returns a note for the reason when they were not measured ("" when measured or when
// there was nothing to measure).
std::string decide_paired(drift_finding& f, const drift_request& r, const gate_policy& budget_policy) {
  std::vector<config_key> again;
  for (const auto& d : f.configs) {
    if (measure_again(d)) again.push_back(d.key);
  }
  if (again.empty() || !r.measure_paired) return {};
  anchor_pair runs;
  try {
    runs = r.measure_paired(f.anchor_commit, again, f.budget);
  } catch (const error& e) {
    return std::to_string(again.size()) + " configuration" + (again.size() == 1 ? "" : "s") +
           " not measured paired at the anchor's commit, so the stored comparison stands: " + e.what();
  }
  const verdict_document v = stats::judge_runs(runs.anchor, runs.head, budget_policy);
  for (auto& d : f.configs) {
    if (!measure_again(d)) continue;
    auto paired =
        std::find_if(v.configs.begin(), v.configs.end(), [&](const config_verdict& c) { return c.key == d.key; });
    if (paired == v.configs.end()) continue;  // not measured again: the stored comparison stands
    if (auto decided = from_verdict(*paired, drift_method::paired)) d = std::move(*decided);
  }
  return {};
}

// The first-parent commits after the anchor up to the head, oldest first; empty when git cannot tell (the head's
// commit or the anchor's is not in this repository).
std::vector<std::string> commits_between(const drift_request& r, const std::string& anchor_commit) {
  const std::string head = is_commit(r.repo_dir, r.head.commit) ? r.head.commit : "HEAD";
  auto listed = git(r.repo_dir, {"rev-list", "--first-parent", "--reverse", anchor_commit + ".." + head});
  std::vector<std::string> commits;
  if (!listed) return commits;
  std::istringstream lines(*listed);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) commits.push_back(line);
  }
  return commits;
}

// The bisect that names the commits behind one configuration's drift, from the anchor to the head.
std::string bisect_command(const drift_finding& f, const drift_config& d, const std::string& head_commit) {
  return "rnx bisect " + f.anchor_commit + " " + (head_commit.empty() ? std::string("HEAD") : head_commit) +
         " --kernel " + d.key.kernel + " --runtime " + d.key.runtime + " --dtype " + d.key.dtype + " --batch " +
         std::to_string(d.key.batch);
}

// For each configuration over budget, the stored history's steps from the anchor to the head (fetched once), the
// commits since the anchor and the bisect that names the slowing ones paired.
void blame_over_budget(drift_finding& f, baseline_backend& backend, const std::vector<stored_run_ref>& history,
                       std::size_t anchor_index, const run_document& anchor_run, const drift_request& r) {
  std::vector<run_document> chain;  // anchor -> newer baselines -> head, oldest first
  std::vector<std::string> ids;
  for (auto& d : f.configs) {
    if (d.result != decision::slower) continue;
    f.exceeded = true;
    if (chain.empty()) {
      const std::size_t first = std::min<std::size_t>(anchor_index, blame_steps);
      chain.push_back(first == anchor_index ? anchor_run : backend.fetch_run(history[first].id));
      ids.push_back(history[first].id);
      for (std::size_t i = first; i-- > 0;) {
        chain.push_back(backend.fetch_run(history[i].id));
        ids.push_back(history[i].id);
      }
      chain.push_back(r.head);
      ids.push_back(r.head_run_id.value_or(""));
    }
    blame(d, chain, ids, r.policy);
    d.bisect_command = bisect_command(f, d, r.head.commit);
    if (f.commits_since_anchor.empty()) f.commits_since_anchor = commits_between(r, f.anchor_commit);
  }
}

// How a configuration's comparison with the anchor was made, in words for the reason and the report.
std::string_view method_words(drift_method m) {
  return m == drift_method::paired ? "measured paired beside the anchor's commit" : "against the anchor's stored run";
}

// "3 commits since the anchor: 1a2b3c4d5e6f 2b3c4d5e6f7a ..." (the first eight), or why none are listed.
std::string commits_listed(const std::vector<std::string>& commits) {
  if (commits.empty()) return "the commits since the anchor could not be listed here (git rev-list)";
  std::string out =
      std::to_string(commits.size()) + " commit" + (commits.size() == 1 ? "" : "s") + " since the anchor:";
  constexpr std::size_t shown = 8;
  for (std::size_t i = 0; i < commits.size() && i < shown; ++i) out += " " + commits[i].substr(0, 12);
  if (commits.size() > shown) out += " and " + std::to_string(commits.size() - shown) + " more";
  return out;
}

// The finding in one line: over budget (each configuration, how it was decided, what it blames), or within.
std::string drift_reason(const drift_finding& f, const std::string& paired_note) {
  std::size_t over = 0;
  std::size_t paired = 0;
  std::size_t undecided = 0;
  for (const auto& d : f.configs) {
    over += d.result == decision::slower;
    paired += d.method == drift_method::paired;
    undecided += d.result == decision::abstain;
  }
  std::ostringstream reason;
  const std::string since = f.anchor_label + " (" + f.anchor_commit.substr(0, 12) + ")";
  if (over) {
    reason << over << " configuration" << (over == 1 ? "" : "s") << " over the drift budget of " << 100 * f.budget
           << "% since " << since;
  } else if (undecided) {
    reason << "none shown over the drift budget of " << 100 * f.budget << "% since " << since << ": " << undecided
           << " configuration" << (undecided == 1 ? "" : "s") << " undecided";
  } else {
    reason << "within the drift budget of " << 100 * f.budget << "% since " << since;
    if (paired) {
      reason << " (" << paired << " configuration" << (paired == 1 ? "" : "s") << " "
             << method_words(drift_method::paired) << ")";
    }
  }
  const drift_config* first_over = nullptr;
  for (const auto& d : f.configs) {
    if (d.result != decision::slower) continue;
    if (!first_over) first_over = &d;
    reason << "; " << d.key.label() << " " << percent(d.ratio) << " " << method_words(d.method);
    if (d.blamed_commits.empty()) {
      reason << ", no stored step blamed";
      continue;
    }
    reason << ", blamed by the stored steps:";
    for (const auto& c : d.blamed_commits) reason << " " << c.substr(0, 12);
  }
  if (first_over) {
    reason << "; " << commits_listed(f.commits_since_anchor)
           << "; to name the slowing ones paired: " << first_over->bisect_command;
  }
  if (!paired_note.empty()) reason << "; " << paired_note;
  return reason.str();
}

}  // namespace

drift_finding check_drift(baseline_backend& backend, const drift_request& r) {
  drift_finding f;
  f.anchor = to_string(r.settings.anchor);
  f.budget = r.settings.budget.value_or(0);
  f.action = r.settings.action;
  std::vector<stored_run_ref> history =
      backend.baseline_history(r.head.project, r.base_branch, r.head.env.env_id, history_limit);
  if (r.head_run_id) std::erase_if(history, [&](const stored_run_ref& x) { return x.id == *r.head_run_id; });
  const anchor_choice anchor = find_anchor(history, r);
  if (!anchor.index) {
    f.reason = "drift budget not checked: " + anchor.missing;
    return f;
  }
  const stored_run_ref& a = history[*anchor.index];
  f.anchor_run_id = a.id;
  f.anchor_commit = a.commit;
  f.anchor_created_at = a.created_at;
  f.anchor_label = anchor.label;
  const run_document anchor_run = backend.fetch_run(a.id);
  gate_policy budget_policy = r.policy;
  budget_policy.rope = f.budget;
  const verdict_document v = stats::judge_runs(anchor_run, r.head, budget_policy);
  f.checked = true;
  for (const auto& c : v.configs) {
    if (auto d = from_verdict(c, drift_method::stored)) f.configs.push_back(std::move(*d));
  }
  const std::string paired_note = decide_paired(f, r, budget_policy);
  blame_over_budget(f, backend, history, *anchor.index, anchor_run, r);
  f.reason = drift_reason(f, paired_note);
  return f;
}

void apply_drift(verdict_document& verdict, const drift_finding& f) {
  if (!f.exceeded) return;
  const bool block = f.action == drift_action::block && !verdict.policy.report_only;
  const overall wanted = block ? overall::block : overall::warn;
  if (static_cast<int>(wanted) > static_cast<int>(verdict.verdict)) verdict.verdict = wanted;
  verdict.reason = verdict.reason.empty() ? f.reason : verdict.reason + "; " + f.reason;
}

bj::value drift_json(const drift_finding& f) {
  bj::array configs;
  for (const auto& d : f.configs) {
    bj::array steps;
    for (const auto& s : d.steps) {
      steps.push_back(bj::object{{"commit", s.commit},
                                 {"run_id", s.run_id},
                                 {"ratio", s.ratio},
                                 {"ci95", bj::array{s.lo, s.hi}},
                                 {"p_slower", s.p_slower},
                                 {"blamed", s.blamed}});
    }
    bj::array blamed;
    for (const auto& c : d.blamed_commits) blamed.push_back(bj::value(c));
    configs.push_back(bj::object{{"kernel", d.key.kernel},
                                 {"runtime", d.key.runtime},
                                 {"dtype", d.key.dtype},
                                 {"batch", d.key.batch},
                                 {"method", to_string(d.method)},
                                 {"decision", to_string(d.result)},
                                 {"ratio", d.ratio},
                                 {"ci95", bj::array{d.lo, d.hi}},
                                 {"p_over_budget", d.p_over},
                                 {"steps", std::move(steps)},
                                 {"blamed_commits", std::move(blamed)},
                                 {"bisect_command", d.bisect_command}});
  }
  bj::array since;
  for (const auto& c : f.commits_since_anchor) since.push_back(bj::value(c));
  return bj::object{{"schema", "rnx.drift/v1"},
                    {"checked", f.checked},
                    {"exceeded", f.exceeded},
                    {"reason", f.reason},
                    {"budget", f.budget},
                    {"action", to_string(f.action)},
                    {"anchor", f.anchor},
                    {"anchor_label", f.anchor_label},
                    {"anchor_run_id", f.anchor_run_id},
                    {"anchor_commit", f.anchor_commit},
                    {"anchor_created_at", f.anchor_created_at},
                    {"configs", std::move(configs)},
                    {"commits_since_anchor", std::move(since)}};
}

std::string render_drift_text(const drift_finding& f) {
  std::ostringstream out;
  out << "drift: " << terminal_safe(f.reason, false) << "\n";
  for (const auto& d : f.configs) {
    out << "  " << terminal_safe(d.key.label(), false) << " since the anchor " << percent(d.ratio) << " "
        << interval(d.lo, d.hi) << " P(over budget) " << d.p_over << "  " << to_string(d.result) << " ("
        << method_words(d.method) << ")\n";
    for (const auto& s : d.steps) {
      out << "    " << s.commit.substr(0, 12) << " " << percent(s.ratio) << " " << interval(s.lo, s.hi)
          << (s.blamed ? "  blamed" : "") << "\n";
    }
    if (!d.bisect_command.empty()) {
      out << "    to name the slowing commits paired: " << terminal_safe(d.bisect_command, false) << "\n";
    }
  }
  return out.str();
}

std::string render_drift_markdown(const drift_finding& f) {
  std::ostringstream out;
  out << "**Drift budget** (" << 100 * f.budget << "% since " << markdown_code(f.anchor)
      << "): " << markdown_escape(f.reason) << "\n";
  for (const auto& d : f.configs) {
    if (d.steps.empty() && d.method == drift_method::stored) continue;
    out << "\n"
        << markdown_code(d.key.label()) << " " << percent(d.ratio) << " " << interval(d.lo, d.hi)
        << " since the anchor, " << to_string(d.result) << " (" << method_words(d.method) << ")"
        << (d.steps.empty() ? "\n" : "; the stored history's steps:\n");
    if (!d.steps.empty()) out << "\n| commit | step | 95% interval | blamed |\n|---|---|---|---|\n";
    for (const auto& s : d.steps) {
      out << "| " << markdown_code(s.commit.substr(0, 12)) << " | " << percent(s.ratio) << " | " << interval(s.lo, s.hi)
          << " | " << (s.blamed ? "yes" : "") << " |\n";
    }
    if (d.bisect_command.empty()) continue;
    out << "\n"
        << (d.blamed_commits.empty() ? "No stored step is blamed; " : "")
        << markdown_escape(commits_listed(f.commits_since_anchor))
        << ". To name the ones that slowed it, each measured paired: " << markdown_code(d.bisect_command) << "\n";
  }
  return out.str();
}

std::string gate_drift_check(verdict_document& verdict, baseline_backend& backend, const run_document& head,
                             const drift_gate_inputs& inputs, const gate_policy& policy) {
  if (!std::filesystem::exists(inputs.config)) return {};
  const drift_settings settings = load_drift_settings(inputs.config);
  if (!settings.budget) return {};
  drift_finding finding;
  try {
    std::optional<std::string> head_id;
    if (!inputs.head_run_id.empty()) head_id = inputs.head_run_id;
    const drift_request request{head,
                                inputs.base_branch,
                                head_id,
                                settings,
                                policy,
                                std::filesystem::absolute(inputs.config).parent_path(),
                                utc_now_rfc3339(),
                                inputs.measure_paired};
    finding = check_drift(backend, request);
  } catch (const error& e) {
    finding.anchor = to_string(settings.anchor);
    finding.budget = *settings.budget;
    finding.action = settings.action;
    finding.reason = "drift budget not checked: the " + backend.describe() + " failed: " + e.what();
  }
  apply_drift(verdict, finding);
  const std::filesystem::path path = inputs.out_dir / "drift.json";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << json::serialize(drift_json(finding), true);
  if (!out) throw error(errc::usage, "cannot write " + path.string() + "; pass --out-dir with a writable folder");
  std::cout << "rnx gate: " << render_drift_text(finding);
  return render_drift_markdown(finding);
}

}  // namespace rnx::gate
