// `rnx optimize`: the rewrite loop (rewriter -> verify -> paired benchmark -> Bayesian verdict) and the proposal
// of the best kept rewrite as a branch, a commit and optionally a pull request.
#include "commands.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/optimize/loop.hpp"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>

namespace rnx::cli {

namespace {

struct optimize_cli_options {
  optimize::optimize_options loop;
  int budget = 0;
  std::string rewriter;
  int processes = 0, min_samples = 0, max_samples = 0;
  double budget_ms = 0, warmup_ms = 0;
  bool no_profile = false;
  bool no_commit = false;
  output_format format = output_format::text;
  std::string json_out;
  std::string repo;
  double verify_timeout_s = 0;
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

void append_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app);
  out << text;
}

void run_optimize_command(optimize_cli_options& o) {
  optimize::optimize_options& l = o.loop;
  if (o.budget > 0) l.budget = o.budget;
  if (!o.rewriter.empty()) l.rewriter = o.rewriter;
  if (o.processes > 0) l.processes = o.processes;
  if (o.min_samples > 0) l.min_samples = o.min_samples;
  if (o.max_samples > 0) l.max_samples = o.max_samples;
  if (o.budget_ms > 0) l.budget_ms = o.budget_ms;
  if (o.warmup_ms > 0) l.warmup_ms = o.warmup_ms;
  if (o.verify_timeout_s > 0) l.verify_limits.wall_s = o.verify_timeout_s;
  l.profile = !o.no_profile;
  l.commit = !o.no_commit;
  if (l.open_pr && !l.commit) throw error(errc::usage, "--open-pr needs the proposal commit; drop --no-commit");
  l.pr.token = env("GITHUB_TOKEN");
  l.pr.repository = !o.repo.empty() ? o.repo : env("GITHUB_REPOSITORY");
  l.pr.api_url = env("GITHUB_API_URL");
  if (l.pr.base.empty()) l.pr.base = env("GITHUB_BASE_REF");
  if (l.open_pr) {
    // Fail before any expensive work when the pull request cannot be opened anyway.
    if (l.pr.token.empty()) {
      throw error(errc::usage,
                  "--open-pr needs a token in $GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: "
                  "${{ secrets.GITHUB_TOKEN }}, permissions contents: write and pull-requests: write)");
    }
    if (l.pr.repository.find('/') == std::string::npos) {
      throw error(errc::usage, "--open-pr needs the repository as owner/name: set $GITHUB_REPOSITORY or pass --repo");
    }
  }
  l.log = &std::cerr;

  optimize::optimize_result r = optimize::run_optimize(l);
  boost::json::value record = optimize::to_json(r);
  if (!o.json_out.empty()) {
    std::ofstream out(o.json_out, std::ios::trunc);
    out << json::serialize(record, true) << "\n";
    if (!out) throw error(errc::not_found, o.json_out + ": cannot write the --json-out file");
  }
  if (o.format == output_format::json) {
    std::cout << json::serialize(record, true) << "\n";
  } else if (o.format == output_format::markdown) {
    std::cout << optimize::render_proposal_body(r);
  } else {
    std::cout << optimize::render_attempts_text(r);
  }
  if (std::string summary = env("GITHUB_STEP_SUMMARY"); !summary.empty()) {
    append_file(summary, optimize::render_proposal_body(r) + "\n");
  }
  if (std::string output = env("GITHUB_OUTPUT"); !output.empty()) {
    std::string lines = std::string("kept=") + (r.best ? "true" : "false") + "\n";
    if (r.proposal) lines += "branch=" + r.proposal->branch + "\ncommit=" + r.proposal->commit + "\n";
    if (r.pr) lines += "pr_url=" + r.pr->html_url + "\npr_number=" + std::to_string(r.pr->number) + "\n";
    append_file(output, lines);
  }
  exit_code() = 0;
}

}  // namespace

void add_optimize_command(CLI::App& app) {
  auto o = std::make_shared<optimize_cli_options>();
  auto* cmd = app.add_subcommand(
      "optimize",
      "Rewrite loop: candidates verified, benchmarked against the original and judged; the best kept "
      "rewrite becomes branch rnx/optimize/<kernel>-<n> (exit 0 done, 2 usage/config/network error)");
  cmd->add_option("--config", o->loop.manifest_path, "The manifest")->capture_default_str();
  cmd->add_option("--kernel", o->loop.kernel, "Kernel name in the manifest")->required();
  cmd->add_option("--budget", o->budget, "Candidates to try (default: [optimize] budget, else 3)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--rewriter", o->rewriter, "command:PATH | anthropic | openai (default: [optimize] rewriter)");
  cmd->add_option("--processes", o->processes, "Worker processes per configuration in the paired benchmark")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--min-samples", o->min_samples, "Fewest samples per process")->check(CLI::Range(1, 100000));
  // One name for the setting: [bench] samples in rnx.toml, --samples of rnx bench and here.
  cmd->add_option("--samples", o->max_samples, "At most this many samples per process ([bench] samples)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option_function<int>(
         "--max-samples",
         [o](int n) {
           std::cerr
               << "rnx optimize: --max-samples is deprecated; use --samples (the same setting, [bench] samples)\n";
           o->max_samples = n;
         },
         "Deprecated: --samples")
      ->check(CLI::Range(1, 100000))
      ->group("");
  cmd->add_option("--budget-ms", o->budget_ms, "Timed milliseconds per configuration and process");
  cmd->add_option("--warmup-ms", o->warmup_ms, "Warm-up milliseconds per configuration and process");
  cmd->add_option("--runtime", o->loop.runtimes, "Only these runtimes (repeatable)");
  cmd->add_option("--dtype", o->loop.dtypes, "Only these dtypes (repeatable)");
  cmd->add_option("--batch", o->loop.batches, "Only these batches (repeatable)");
  cmd->add_flag("--no-profile", o->no_profile, "Do not profile the original for the rewriter");
  cmd->add_flag_function(
         "--shared-process-benchmark", [o](std::int64_t) { o->loop.isolated_benchmark = false; },
         "For comparison only: benchmark original and candidate in one process on the same inputs at every call (the "
         "earlier benchmark, which a memoizing or sabotaging candidate fools; bench/optimize_cheats.py)")
      ->group("");
  cmd->add_option("--verify-timeout", o->verify_timeout_s, "Seconds one candidate's verification may take");
  cmd->add_flag("--allow-weaker-sandbox", o->loop.verify_limits.allow_weaker,
                "Verify candidates even where the sandbox cannot apply its network namespace or seccomp filter "
                "(every report says so)");
  cmd->add_flag("--no-commit", o->no_commit, "Report only: create no branch even when a rewrite is kept");
  cmd->add_flag("--open-pr", o->loop.open_pr,
                "Push the branch and open a pull request ($GITHUB_TOKEN, $GITHUB_API_URL)");
  cmd->add_option("--repo", o->repo, "owner/name for the pull request (default: $GITHUB_REPOSITORY)");
  cmd->add_option("--base", o->loop.pr.base,
                  "The pull request's base branch (default: $GITHUB_BASE_REF, else HEAD's branch)");
  cmd->add_option("--remote", o->loop.pr.remote, "The remote the branch is pushed to")->capture_default_str();
  cmd->add_option("--work-dir", o->loop.work_dir, "Folder for candidates and records (default: a new temporary one)");
  cmd->add_option("--json-out", o->json_out, "Also write the JSON record of every attempt here");
  add_format_option(*cmd, o->format);
  cmd->callback([o] { run_optimize_command(*o); });
}

}  // namespace rnx::cli
