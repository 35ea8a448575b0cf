// `rnx gate`'s measuring steps: check the service, measure or read the runs, file the head, confirm, drift's pair.
#include "gate_measure.hpp"

#include "gate_bench.hpp"
#include "git_command.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/text.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

namespace rnx::gate {

namespace {

// The run is filed under what GitHub says was measured; the runner does not know the event.
void stamp_run(run_document& run, const github_context& ctx, const std::string& project) {
  if (!project.empty() && run.project.empty()) run.project = project;
  if (!ctx.commit.empty()) run.commit = ctx.commit;
  if (!ctx.branch.empty()) run.branch = ctx.branch;
  if (!ctx.base_branch.empty()) run.base_branch = ctx.base_branch;
  if (ctx.event == event_kind::pull_request || ctx.pull_request) run.pull_request = ctx.pull_request;
  if (ctx.event == event_kind::push_like) {
    run.pull_request.reset();
    run.base_branch = run.branch;
  }
}

// The store files a run under its project and branch, and a pull request's run under the branch it merges into.
// What a run (a prepared one above all) lacks is named with its file, JSON path and the flag that supplies it.
void check_filing(const run_document& run, const std::string& source, const std::string& config) {
  if (run.project.empty()) {
    throw error(errc::usage,
                source + ": $.project is empty: set [project] name in " + config + " or pass --project NAME");
  }
  if (run.branch.empty()) {
    throw error(errc::usage, source +
                                 ": $.branch is empty and nothing else names the branch measured (no git "
                                 "branch, no GitHub event): pass --branch NAME");
  }
  if (run.pull_request && run.base_branch.empty()) {
    throw error(errc::usage, source + ": $.base_branch is empty for pull request #" +
                                 std::to_string(*run.pull_request) +
                                 ": pass --base-branch NAME, the branch it merges into");
  }
}

// `rnx bench` (with --pair in paired mode) measures the head and, paired, the base beside it.
measured_runs bench_head_and_base(const gate_plan& plan) {
#ifdef RNX_HAVE_TORCH
  const gate_flags& flags = plan.flags;
  bench_request request;
  request.config = flags.config;
  request.out = (plan.out_dir / "run.json").string();
  request.shard = flags.sharding.shard;
  request.run_group = flags.sharding.run_group;
  if (plan.paired && flags.base_results.empty()) {
    request.pair_ref = plan.pair_ref;
    request.base_out = (plan.out_dir / "base-run.json").string();
    request.rope = plan.policy.policy.rope;
    request.probability = plan.policy.policy.probability;
  }
  auto outcome = run_bench(request);
  measured_runs runs{std::move(outcome.head), std::move(outcome.base), plan.pair_ref};
  if (plan.paired && !flags.base_results.empty()) runs.base = read_run_file(flags.base_results);
  return runs;
#else
  (void)plan;
  throw error(errc::usage,
              "this rnx was built without the runner (RNX_WITH_TORCH=OFF): pass --results RUN.json "
              "from `rnx bench` on a machine that has it");
#endif
}

// --merge: the shards' runs put together; paired when their base runs came with them.
measured_runs merged_runs(const gate_plan& plan, const merged_shards& shards) {
  measured_runs runs{shards.head.merged, std::nullopt, plan.pair_ref};
  if (plan.paired && !shards.base) {
    throw error(errc::usage,
                "--mode paired with --merge needs the shards' base runs (rnx bench --base-out) among "
                "the files");
  }
  if (plan.paired) {
    runs.base = shards.base->merged;
    runs.pair_ref = runs.base->commit;
  }
  return runs;
}

}  // namespace

std::string service_lead(const gate_plan& plan, const service_problem& problem) {
  return std::string(plan.paired ? "verdict not stored: " : "no verdict: ") + describe(problem);
}

std::optional<service_problem> check_service(const gate_plan& plan) {
  if (auto problem = find_service_problem(plan.flags.backend, plan.manifest_ptr())) {
    const bool fail = plan.on_service_error == service_error_action::fail;
    std::cerr << "rnx gate: " << (fail ? "error: " : "warning: ") << terminal_safe(service_lead(plan, *problem))
              << "\n";
    return problem;
  }
  if (!plan.flags.results.empty() || !plan.flags.sharding.merge.empty()) return std::nullopt;
  check_access_before_measuring(plan.flags.backend, plan.manifest_ptr(), plan.project, is_push_run(plan.ctx),
                                plan.ctx.pull_request_from_fork && env_or_empty("RNX_TOKEN").empty());
  return std::nullopt;
}

measured_runs measure(const gate_plan& plan, const std::optional<merged_shards>& shards) {
  if (shards) return merged_runs(plan, *shards);
  const gate_flags& flags = plan.flags;
  if (flags.results.empty()) return bench_head_and_base(plan);
  measured_runs runs{read_run_file(flags.results), std::nullopt, plan.pair_ref};
  if (!plan.paired) return runs;
  if (flags.base_results.empty()) {
    throw error(errc::usage,
                "paired mode with --results needs --base-results BASE.json (the base revision's "
                "run), or drop --results to let rnx bench --pair measure both");
  }
  runs.base = read_run_file(flags.base_results);
  return runs;
}

run_document file_head_run(const gate_plan& plan, run_document head) {
  stamp_run(head, plan.ctx, plan.project);
  std::error_code ec;
  std::filesystem::create_directories(plan.out_dir, ec);
  if (ec) throw error(errc::usage, "cannot create --out-dir " + plan.flags.out_dir + ": " + ec.message());
  check_filing(head, plan.flags.results.empty() ? "the run rnx bench measured" : plan.flags.results, plan.flags.config);
  write_run_file(head, (plan.out_dir / "run.json").string());
  return head;
}

revised_verdict confirm_slower(const gate_plan& plan, verdict_document verdict) {
  std::vector<std::string> kernels;
  std::size_t slower = 0;
  for (const auto& c : verdict.configs) {
    if (c.result != decision::slower) continue;
    ++slower;
    if (std::find(kernels.begin(), kernels.end(), c.key.kernel) == kernels.end()) kernels.push_back(c.key.kernel);
  }
  if (slower == 0) return {std::move(verdict), {}};
  const std::string commit = verdict.baseline ? verdict.baseline->commit : std::string();
  const std::string what =
      std::to_string(slower) + " configuration" + (slower == 1 ? "" : "s") + " slower against the stored baseline";
  if (commit.empty()) return {std::move(verdict), what + " not re-measured: the baseline run names no commit"};
#ifdef RNX_HAVE_TORCH
  bench_request request;
  request.config = plan.flags.config;
  request.out = (plan.out_dir / "confirm-run.json").string();
  request.pair_ref = commit;
  request.base_out = (plan.out_dir / "confirm-base-run.json").string();
  request.kernels = kernels;
  request.rope = plan.policy.policy.rope;
  request.probability = plan.policy.policy.probability;
  bench_outcome outcome;
  try {
    outcome = run_bench(request);
  } catch (const error& e) {
    return {std::move(verdict), what + " not re-measured, so the stored verdict stands: " + e.what()};
  }
  const verdict_document paired = stats::judge_runs(*outcome.base, outcome.head, plan.policy.policy);
  const std::string remeasured = "re-measured paired at the baseline's commit " + commit.substr(0, 12);
  std::size_t confirmed = 0;
  for (auto& c : verdict.configs) {
    if (c.result != decision::slower) continue;
    auto again = std::find_if(paired.configs.begin(), paired.configs.end(),
                              [&](const config_verdict& p) { return p.key == c.key; });
    if (again == paired.configs.end()) continue;  // not measured again: the stored decision stands
    std::ostringstream stored;
    stored.precision(3);
    stored << "the stored baseline said slower x" << c.ratio.value_or(0);
    config_verdict replaced = *again;
    replaced.reason = remeasured + ": " +
                      (replaced.reason.empty() ? std::string(to_string(replaced.result)) : replaced.reason) + "; " +
                      stored.str();
    confirmed += replaced.result == decision::slower;
    c = std::move(replaced);
  }
  verdict.verdict = stats::overall_answer(verdict.configs, plan.policy.policy, verdict.reason);
  return {std::move(verdict), what + " " + remeasured + " in this job: " + std::to_string(confirmed) + " confirmed"};
#else
  (void)plan;
  (void)kernels;
  return {std::move(verdict), what + " not re-measured: this rnx was built without the runner (RNX_WITH_TORCH=OFF)"};
#endif
}

measure_beside_anchor drift_measurement(const gate_plan& plan) {
#ifdef RNX_HAVE_TORCH
  if (!plan.paired || !plan.flags.results.empty() || !plan.flags.sharding.merge.empty()) return {};
  return [config = plan.flags.config, out_dir = plan.out_dir, probability = plan.policy.policy.probability](
             const std::string& anchor_commit, const std::vector<config_key>& configs, double rope) {
    if (!is_commit(std::filesystem::absolute(config).parent_path(), anchor_commit)) {
      throw error(errc::usage, "the anchor's commit " + anchor_commit +
                                   " is not in this checkout (fetch the "
                                   "history: actions/checkout with fetch-depth: 0)");
    }
    bench_request request;
    request.config = config;
    request.out = (out_dir / "drift-run.json").string();
    request.pair_ref = anchor_commit;
    request.base_out = (out_dir / "drift-anchor-run.json").string();
    auto add = [](auto& values, const auto& value) {
      if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
    };
    for (const auto& k : configs) {
      add(request.kernels, k.kernel);
      add(request.runtimes, k.runtime);
      add(request.dtypes, k.dtype);
      add(request.batches, k.batch);
    }
    request.rope = rope;
    request.probability = probability;
    std::cout << "rnx gate: drift: " << configs.size() << " configuration" << (configs.size() == 1 ? "" : "s")
              << " undecided or over budget against the anchor's stored run; measuring the head beside the "
              << "anchor's commit " << anchor_commit.substr(0, 12) << " (paired)\n";
    bench_outcome outcome = run_bench(request);
    if (!outcome.base) throw error(errc::kernel_failed, "rnx bench --pair wrote no run of the anchor's commit");
    return anchor_pair{std::move(*outcome.base), std::move(outcome.head)};
  };
#else
  (void)plan;
  return {};
#endif
}

}  // namespace rnx::gate
