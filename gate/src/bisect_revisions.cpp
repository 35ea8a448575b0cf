// `rnx bisect`'s revisions: the first-parent range, and paired comparisons of two of its commits.
#include "bisect_revisions.hpp"

#include "gate_bench.hpp"
#include "git_command.hpp"

#include "rnx/common/error.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace rnx::gate {

namespace fs = std::filesystem;

std::vector<revision> first_parent_range(const fs::path& repo, const std::string& good, const std::string& bad) {
  std::vector<revision> out;
  std::string shas[2];
  const std::string names[2] = {good, bad};
  for (int i = 0; i < 2; ++i) {
    if (!is_commit(repo, names[i])) {
      throw error(errc::usage, "rnx bisect: " + names[i] + " is not a commit of " + repo.string() +
                                   " (name a commit, branch or tag; fetch it first)");
    }
    shas[i] = git(repo, {"rev-parse", "--verify", names[i] + "^{commit}"}).value_or("");
  }
  if (shas[0] == shas[1]) throw error(errc::usage, "rnx bisect: " + good + " and " + bad + " are the same commit");
  if (!git(repo, {"merge-base", "--is-ancestor", shas[0], shas[1]})) {
    throw error(errc::usage, "rnx bisect: " + good + " is not an ancestor of " + bad +
                                 " (GOOD must come before BAD on BAD's history)");
  }
  // Unit separator between sha and subject: a subject may hold any printable character.
  auto listed = git(repo, {"log", "--first-parent", "--reverse", "--format=%H%x1f%s", shas[0] + ".." + shas[1]});
  if (!listed) throw error(errc::internal, "git log " + shas[0] + ".." + shas[1] + " failed in " + repo.string());
  out.push_back({shas[0], git(repo, {"log", "-1", "--format=%s", shas[0]}).value_or("")});
  std::istringstream lines(*listed);
  for (std::string line; std::getline(lines, line);) {
    const auto cut = line.find('\x1f');
    if (cut == std::string::npos) continue;
    out.push_back({line.substr(0, cut), line.substr(cut + 1)});
  }
  if (out.back().sha != shas[1]) {
    throw error(errc::usage, "rnx bisect: " + good + " is not on the first-parent history of " + bad +
                                 " (it was merged from a side branch): pass a commit of " + bad + "'s own line");
  }
  return out;
}

revision_measure::revision_measure(bisect_setup setup, std::function<void(const std::string&)> log)
    : setup_(std::move(setup)), log_(std::move(log)) {}

namespace {

// FNV-1a of the filters: the cache names a pair of runs by its commits and by what was measured.
std::string filter_tag(const bisect_setup& s) {
  std::string text = s.manifest_relative.string();
  for (const auto* list : {&s.kernels, &s.runtimes, &s.dtypes}) {
    for (const auto& v : *list) text += "\x1f" + v;
    text += "\x1e";
  }
  for (auto b : s.batches) text += "\x1f" + std::to_string(b);
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return std::string(out, 8);
}

// A word as a POSIX shell reads it back unchanged (the repro command is shown, not run).
std::string shell_word(const std::string& word) {
  const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("_./:=@%+-,").find(c) != std::string_view::npos;
  });
  if (plain) return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

revision_measure::pair_files revision_measure::files_for(std::size_t base, std::size_t head) const {
  const std::string stem =
      setup_.commits[base].sha.substr(0, 12) + "-" + setup_.commits[head].sha.substr(0, 12) + "-" + filter_tag(setup_);
  return {(setup_.cache_dir / (stem + "-head.json")).string(), (setup_.cache_dir / (stem + "-base.json")).string()};
}

std::optional<std::pair<run_document, run_document>> revision_measure::cached(const pair_files& files, std::size_t base,
                                                                              std::size_t head) const {
  std::error_code ec;
  if (!fs::exists(files.head, ec) || !fs::exists(files.base, ec)) return std::nullopt;
  try {
    auto h = read_run_file(files.head);
    auto b = read_run_file(files.base);
    if (h.commit != setup_.commits[head].sha || b.commit != setup_.commits[base].sha) return std::nullopt;
    return std::make_pair(std::move(b), std::move(h));
  } catch (const error&) {
    return std::nullopt;  // a damaged cache file is measured again, not trusted
  }
}

std::pair<run_document, run_document> revision_measure::measure(const pair_files& files, std::size_t base,
                                                                std::size_t head) {
  const revision& h = setup_.commits[head];
  scoped_worktree checkout(setup_.repo, h.sha, "rnx bisect");
  const fs::path config = checkout.path() / setup_.manifest_relative;
  if (!fs::exists(config)) {
    throw error(errc::not_found, "rnx bisect: commit " + h.sha.substr(0, 12) + " has no " +
                                     setup_.manifest_relative.string() + " (the manifest must exist at every commit)");
  }
  bench_request request;
  request.config = config.string();
  request.out = files.head;
  request.pair_ref = setup_.commits[base].sha;
  request.base_out = files.base;
  request.kernels = setup_.kernels;
  request.runtimes = setup_.runtimes;
  request.dtypes = setup_.dtypes;
  request.batches = setup_.batches;
  request.quiet = true;
  request.processes = setup_.processes;
  request.max_processes = setup_.max_processes;
  request.budget_ms = setup_.budget_ms;
  request.rope = setup_.policy.rope;
  request.probability = setup_.policy.probability;
  bench_outcome outcome = run_bench(request);
  return {std::move(*outcome.base), std::move(outcome.head)};
}

step_estimate revision_measure::estimate(const run_document& base, const run_document& head, std::size_t head_index) {
  const verdict_document v = stats::judge_runs(base, head, setup_.policy);
  const config_verdict* chosen = nullptr;
  if (key_) {
    for (const auto& c : v.configs) {
      if (c.key == *key_) chosen = &c;
    }
  } else {
    for (const auto& c : v.configs) {
      if (c.ratio && c.ci_lo && c.ci_hi && (!chosen || *c.ratio > *chosen->ratio)) chosen = &c;
    }
    if (chosen) key_ = chosen->key;
  }
  if (!chosen || !chosen->ratio || !chosen->ci_lo || !chosen->ci_hi || !chosen->p_slower) {
    std::string why = chosen ? chosen->reason : std::string("no configuration measured on both sides");
    for (const auto& r : head.results) {
      if (key_ && r.key() == *key_ && !r.message.empty()) why = r.message;
    }
    throw error(errc::kernel_failed, "rnx bisect: " + (key_ ? key_->label() : std::string("the configuration")) +
                                         " could not be compared at " + setup_.commits[head_index].sha.substr(0, 12) +
                                         ": " + why);
  }
  step_estimate e;
  e.ratio = *chosen->ratio;
  e.lo = *chosen->ci_lo;
  e.hi = *chosen->ci_hi;
  e.p_slower = *chosen->p_slower;
  return e;
}

step_estimate revision_measure::compare(std::size_t base, std::size_t head) {
  const pair_files files = files_for(base, head);
  auto runs = cached(files, base, head);
  const bool reused = runs.has_value();
  const std::string what = setup_.commits[base].sha.substr(0, 12) + " .. " + setup_.commits[head].sha.substr(0, 12);
  if (!reused) {
    if (log_) log_("measuring " + what + " paired (rnx bench --pair)");
    std::error_code ec;
    fs::create_directories(setup_.cache_dir, ec);
    if (ec) throw error(errc::usage, "cannot create " + setup_.cache_dir.string() + ": " + ec.message());
    runs = measure(files, base, head);
  } else if (log_) {
    log_("reusing the paired run " + files.head + " for " + what);
  }
  step_estimate e = estimate(runs->first, runs->second, head);
  e.reused = reused;
  e.evidence = files.head;
  return e;
}

std::string repro_command(const bisect_setup& setup, const config_key& key, const std::string& parent) {
  std::vector<std::string> words = {"rnx",       "bench",
                                    "--config",  setup.manifest_relative.string(),
                                    "--pair",    parent,
                                    "--kernel",  key.kernel,
                                    "--runtime", key.runtime,
                                    "--dtype",   key.dtype,
                                    "--batch",   std::to_string(key.batch),
                                    "--rope"};
  std::ostringstream rope;
  rope << setup.policy.rope;
  words.push_back(rope.str());
  words.insert(words.end(), {"--out", "head.json", "--base-out", "base.json"});
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
  return out;
}

}  // namespace rnx::gate
