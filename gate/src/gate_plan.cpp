// `rnx gate`'s plan: the mode, the manifest and the policy in force, from the flags and the CI context.
#include "gate_plan.hpp"

#include "rnx/common/error.hpp"

#include <cstdlib>
#include <utility>

namespace rnx::gate {

namespace {

// The base revision of a pull request as this checkout can reach it: --pair-ref, the event's base commit, or the
// base branch (origin/BRANCH, then BRANCH); "" when none is a commit here (a shallow clone, say).
std::string reachable_base(const std::string& pair_ref, const github_context& ctx,
                           const commit_lookup& is_commit_here) {
  std::vector<std::string> candidates;
  if (!pair_ref.empty()) candidates.push_back(pair_ref);
  if (!ctx.base_commit.empty()) candidates.push_back(ctx.base_commit);
  if (!ctx.base_branch.empty()) candidates.insert(candidates.end(), {"origin/" + ctx.base_branch, ctx.base_branch});
  for (const auto& ref : candidates) {
    if (is_commit_here(ref)) return ref;
  }
  return {};
}

// --mode as given, or the mode of the --merge shards; nullopt = choose.
std::optional<gate_mode> requested_mode(const std::string& text, std::optional<gate_mode> merged) {
  if (text.empty()) return merged;
  auto mode = gate_mode_from_string(text);
  if (!mode) throw error(errc::usage, "--mode \"" + text + "\" must be stored, paired or confirmed");
  return mode;
}

// The automatic choice: paired where the base revision is in the checkout, else stored (and why, on a pull request).
mode_choice automatic_mode(const gate_flags& flags, const github_context& ctx, const commit_lookup& is_commit_here) {
  mode_choice choice;
  const bool pull_request = ctx.event == event_kind::pull_request ||
                            (ctx.event == event_kind::local && ctx.pull_request && !ctx.base_branch.empty());
  std::string base_here;
  if (pull_request && flags.results.empty()) base_here = reachable_base(flags.pair_ref, ctx, is_commit_here);
  if (!base_here.empty()) {
    choice.mode = gate_mode::paired;
    choice.pair_ref = flags.pair_ref.empty() ? base_here : flags.pair_ref;
    choice.notes.push_back("rnx gate: paired mode: the base revision " + base_here +
                           " is measured beside the head in this job (--mode stored compares with the stored "
                           "baseline instead)");
    return choice;
  }
  if (pull_request && flags.results.empty()) {
    choice.notes.push_back(
        "rnx gate: stored mode: the base revision (" + (ctx.base_commit.empty() ? ctx.base_branch : ctx.base_commit) +
        ") is not in this checkout, so the stored baseline decides; check out with fetch-depth: 0 for the paired "
        "comparison");
  }
  return choice;
}

// The base revision a paired job measures: --pair-ref, else what this checkout reaches, else the event's base.
std::string paired_base_ref(const std::string& pair_ref, const gate_flags& flags, const github_context& ctx,
                            const commit_lookup& is_commit_here) {
  std::string ref = !pair_ref.empty() ? pair_ref : reachable_base(pair_ref, ctx, is_commit_here);
  if (ref.empty() && !ctx.base_commit.empty()) ref = ctx.base_commit;
  if (ref.empty() && flags.base_results.empty()) {
    throw error(errc::usage,
                "paired mode needs the base revision: pass --pair-ref REF (e.g. origin/main) or "
                "--base-branch");
  }
  return ref;
}

}  // namespace

github_context with_flags(github_context ctx, const gate_flags& flags) {
  if (!flags.commit.empty()) ctx.commit = flags.commit;
  if (!flags.branch.empty()) ctx.branch = flags.branch;
  if (!flags.base_branch.empty()) ctx.base_branch = flags.base_branch;
  if (!flags.pull_request.empty()) {
    char* end = nullptr;
    long long n = std::strtoll(flags.pull_request.c_str(), &end, 10);
    if (end != flags.pull_request.c_str() + flags.pull_request.size() || n < 1) {
      throw error(errc::usage, "--pull-request \"" + flags.pull_request + "\" is not a pull request number");
    }
    ctx.pull_request = n;
  }
  return ctx;
}

bool is_pull_request_run(const github_context& ctx) {
  return ctx.event == event_kind::pull_request || (ctx.event == event_kind::local && ctx.pull_request);
}

bool is_push_run(const github_context& ctx) {
  return ctx.event == event_kind::push_like || (ctx.event == event_kind::local && !ctx.pull_request);
}

mode_choice choose_mode(const gate_flags& flags, const github_context& ctx, std::optional<gate_mode> merged,
                        const commit_lookup& is_commit_here) {
  mode_choice choice;
  if (auto requested = requested_mode(flags.mode, merged)) {
    choice.mode = *requested;
    if (choice.mode != gate_mode::paired && !flags.base_results.empty()) {
      throw error(errc::usage, "--base-results " + flags.base_results +
                                   " is the base run of the paired comparison, "
                                   "which --mode " +
                                   std::string(to_string(choice.mode)) +
                                   " does not make: use --mode paired, or drop --base-results");
    }
  } else if (!flags.base_results.empty()) {
    choice.mode = gate_mode::paired;
    choice.notes.push_back("rnx gate: paired mode: the head is judged against the base run " + flags.base_results +
                           " (--base-results)");
  } else {
    choice = automatic_mode(flags, ctx, is_commit_here);
  }
  choice.paired = choice.mode == gate_mode::paired && ctx.event != event_kind::push_like;
  if (choice.mode == gate_mode::paired && !choice.paired) {
    choice.notes.emplace_back("rnx gate: a push is stored as the new baseline; paired mode applies to pull requests");
  }
  return choice;
}

gate_mode gate_plan::reported_mode() const {
  if (paired) return gate_mode::paired;
  return mode == gate_mode::confirmed ? gate_mode::confirmed : gate_mode::stored;
}

bool manifest_required(const gate_flags& flags) {
  const bool prepared = !flags.results.empty() || !flags.sharding.merge.empty() || flags.sharding.group_verdict;
  return flags.config_given || !prepared;
}

gate_plan plan_gate(gate_flags flags, github_context ctx, const mode_choice& mode, std::optional<manifest> m,
                    const commit_lookup& is_commit_here) {
  gate_plan plan;
  plan.mode = mode.mode;
  plan.paired = mode.paired;
  plan.m = std::move(m);
  plan.policy = resolve_policy(plan.manifest_ptr(), flags.policy, ctx.runner_environment);
  plan.project = !flags.project.empty() ? flags.project : plan.m ? plan.m->project : std::string();
  plan.out_dir = flags.out_dir;
  plan.on_service_error = resolve_service_error_action(flags.on_service_error, plan.manifest_ptr());
  if (plan.paired && flags.sharding.merge.empty()) {
    const std::string& given = mode.pair_ref.empty() ? flags.pair_ref : mode.pair_ref;
    plan.pair_ref = paired_base_ref(given, flags, ctx, is_commit_here);
  }
  plan.flags = std::move(flags);
  plan.ctx = std::move(ctx);
  return plan;
}

}  // namespace rnx::gate
