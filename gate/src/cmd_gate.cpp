// `rnx gate`: benchmark (or take a run), upload, get the verdict, report to GitHub, exit 0/1/2. The flags become a
// plan (gate_plan.cpp), and the job is the steps below in order, each returning what the next needs: measure
// (gate_measure.cpp), store and judge (gate_judge.cpp), publish (gate_publish.cpp), and the exit status.
#include "commands.hpp"

#include "gate_accept.hpp"
#include "gate_context.hpp"
#include "gate_judge.hpp"
#include "gate_measure.hpp"
#include "gate_merge.hpp"
#include "gate_plan.hpp"
#include "gate_publish.hpp"
#include "gate_settings.hpp"
#include "git_command.hpp"
#ifdef RNX_HAVE_TORCH
#include "gate_explain.hpp"
#endif

#include "rnx/common/error.hpp"
#include "rnx/common/explain_settings.hpp"
#include "rnx/common/text.hpp"
#include "rnx/stats/shards.hpp"

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

namespace rnx::cli {

namespace {

using namespace rnx::gate;

// Events the gate does not measure on, answered here with their exit status; nullopt for a gating event.
std::optional<int> answer_non_gating_event(const github_context& ctx, const gate_flags& flags) {
  if (ctx.event == event_kind::unsupported) {
    std::cout << "rnx gate: nothing to do on a " << ctx.event_name
              << " event (it gates pull_request, push and /rnx accept comments)\n";
    return 0;
  }
  if (ctx.event == event_kind::issue_comment) {
    return accept_from_comment(ctx, comment_accept_settings::from_flags(flags));
  }
  return std::nullopt;
}

// The plan, with what it reads of the outside read here: the checkout's commits (git beside the manifest), the
// manifest itself, and the automatic mode's explanation printed before the manifest is loaded.
gate_plan make_plan(const gate_flags& flags, github_context ctx, const std::optional<merged_shards>& shards) {
  const std::filesystem::path dir = std::filesystem::absolute(flags.config).parent_path();
  const commit_lookup is_commit_here = [&dir](const std::string& ref) { return is_commit(dir, ref); };
  std::optional<gate_mode> merged;
  if (shards) merged = shards->base ? gate_mode::paired : gate_mode::stored;
  const mode_choice mode = choose_mode(flags, ctx, merged, is_commit_here);
  for (const auto& line : mode.notes) std::cout << line << "\n";
  std::optional<manifest> m = load_manifest_if_present(flags.config, manifest_required(flags));
  return plan_gate(flags, std::move(ctx), mode, std::move(m), is_commit_here);
}

// Each configuration the scope asks for explained (base and head profiled), where this rnx has the profile worker.
verdict_document with_explanations(const gate_plan& plan, const measured_runs& runs, verdict_document verdict) {
#ifdef RNX_HAVE_TORCH
  return explain_gate_verdict(plan, runs, std::move(verdict));
#else
  (void)plan;
  (void)runs;
  return verdict;
#endif
}

// From the store's answer to the exit status: each step revises the verdict or adds to the report, in this order.
int report(const gate_plan& plan, judged_job job, const std::optional<merged_shards>& shards) {
  report_facts facts = std::move(job.facts);
  facts.accept_hint = offer_accept(plan, job.store, facts.run_id);
  verdict_document verdict = std::move(job.store.verdict);
  if (plan.mode == gate_mode::confirmed && plan.ctx.event == event_kind::pull_request) {
    revised_verdict confirmed = confirm_slower(plan, std::move(verdict));
    verdict = std::move(confirmed.verdict);
    if (!confirmed.note.empty()) {
      std::cout << "rnx gate: " << terminal_safe(confirmed.note) << "\n";
      facts.note = confirmed.note;
    }
  }
  if (plan.paired) {
    verdict_document judged = with_explanations(plan, job.runs, judge_paired(plan, job.runs, facts.run_id));
    revised_verdict stored = store_paired(plan, job, std::move(judged));
    verdict = std::move(stored.verdict);
    if (!stored.note.empty()) {
      std::cout << "rnx gate: " << terminal_safe(stored.note) << "\n";
      facts.note += (facts.note.empty() ? "" : "; ") + stored.note;
    }
  } else {
    verdict = with_explanations(plan, job.runs, std::move(verdict));
  }
  revised_verdict drift = check_drift_budget(plan, job, std::move(verdict), drift_measurement(plan));
  verdict = std::move(drift.verdict);
  if (shards) stats::add_missing_shards(verdict, shards->head, plan.policy.policy);
  verdict = note_new_baseline(plan, job, std::move(verdict));
  run_history history = recent_history(plan, job);
  facts.run_url = std::move(history.run_url);
  facts.history = std::move(history.history);
  const gate_answer answer{std::move(verdict), std::move(facts), std::move(drift.note)};
  publish(plan, answer, {job.store.backend.get(), job.store.upload, plan.paired, job.runs.head, job.runs.base});
  return exit_status(plan, answer.verdict, job.runs.head, answer.facts);
}

int run_gate(const gate_flags& flags) {
  if (!flags.explain.empty() && !explain_scope_from_string(flags.explain)) {
    throw error(errc::usage, "--explain " + flags.explain +
                                 ": not a scope (auto: slower and abstaining configurations, all: every one, off)");
  }
  github_context ctx = with_flags(read_github_context(process_env()), flags);
  if (auto answered = answer_non_gating_event(ctx, flags)) return *answered;
  check_shard_flags(flags.sharding, !flags.results.empty());
  std::optional<merged_shards> shards;
  if (!flags.sharding.merge.empty()) shards = read_shard_files(flags.sharding.merge);
  const gate_plan plan = make_plan(flags, std::move(ctx), shards);
  if (plan.flags.sharding.group_verdict) return report(plan, judge_group(plan), shards);
  const std::optional<service_problem> problem = check_service(plan);
  measured_runs runs = measure(plan, shards);
  runs.head = file_head_run(plan, std::move(runs.head));
  if (runs.head.shard) {
    // A shard job reports nothing: the matrix's final job does, once (docs/scaling.md).
    hand_in_shard(runs.head, plan.paired, runs.base.has_value(), plan.flags.backend, plan.manifest_ptr(),
                  plan.flags.out_dir, plan.ctx.output_path);
    return 0;
  }
  return report(plan, store_and_judge(plan, std::move(runs), problem), shards);
}

}  // namespace

command_run add_gate_command(CLI::App& app) {
  auto o = std::make_shared<gate_flags>();
  auto* cmd = app.add_subcommand(
      "gate", "CI gate: benchmark, upload, verdict, report to GitHub (exit 0 PASS/WARN, 1 BLOCK, 2 bad config)");
  auto* config = cmd->add_option("--config", o->config, "The manifest")->capture_default_str();
  cmd->add_option("--results", o->results, "A prepared head run (rnx.run/v1) instead of running rnx bench");
  cmd->add_option("--base-results", o->base_results,
                  "A prepared base run instead of rnx bench --pair: the paired comparison (implies --mode paired)");
  cmd->add_option("--mode", o->mode,
                  "paired: against the base revision measured in this job (the default on pull "
                  "requests whose base commit is checked out); stored: against the stored "
                  "baseline (the default otherwise); confirmed: stored, and what it calls slower "
                  "is measured again paired at the baseline's commit before it can block");
  cmd->add_option("--pair-ref", o->pair_ref, "Paired mode's base revision (default: the PR's base commit)");
  add_backend_flags(*cmd, o->backend);
  cmd->add_option("--on-service-error", o->on_service_error,
                  "When the service cannot be used: warn (report \"no verdict\", exit 0) or fail (exit 2); "
                  "default [gate] on_service_error, else warn");
  add_policy_flags(*cmd, o->policy);
  add_shard_flags(*cmd, o->sharding);
  cmd->add_option("--project", o->project, "Project name (default: [project] name of the manifest)");
  cmd->add_option("--commit", o->commit, "Commit measured (default: from GitHub's event)");
  cmd->add_option("--branch", o->branch, "Branch measured (default: from GitHub's event)");
  cmd->add_option("--base-branch", o->base_branch, "Branch whose baseline to compare with");
  cmd->add_option("--pull-request", o->pull_request, "Pull request number (outside GitHub)");
  cmd->add_option("--out-dir", o->out_dir, "Folder for run.json, verdict.json and report.md")->capture_default_str();
  cmd->add_option("--report-key", o->report_key,
                  "Distinguishes the PR comments of several gate jobs (default: the job id)");
  cmd->add_option("--status-context", o->status_context, "Commit status context")->capture_default_str();
  cmd->add_flag("--no-github", o->no_github, "Do not comment or post a status through the GitHub API");
  cmd->add_option("--explain", o->explain,
                  "Profile diffs of base and head: auto (slower and abstaining configurations), all, or off; default "
                  "[gate] explain, else auto");
  return {cmd, [o, config] {
            gate_flags flags = *o;
            flags.config_given = config->count() > 0 && !flags.config.empty();
            if (flags.config.empty()) flags.config = "rnx.toml";
            return run_gate(flags);
          }};
}

}  // namespace rnx::cli
