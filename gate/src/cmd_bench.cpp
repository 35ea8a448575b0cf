// `rnx bench`: benchmark the manifest's kernels (optionally paired with a base revision) into run documents.
#include "commands.hpp"

#include "git_command.hpp"

#include "rnx/common/bench_job.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/policy_options.hpp"
#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/shard.hpp"
#include "rnx/runner/bench.hpp"
#include "rnx/stats/verdict.hpp"

#include <boost/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rnx::cli {

namespace {

namespace fs = std::filesystem;
using gate::git;

struct bench_args {
  std::string job;  // --job FILE: every option below from rnx gate's typed job (rnx/common/bench_job.hpp)
  std::string config = "rnx.toml";
  std::string out;
  std::vector<std::string> kernels;
  std::vector<std::string> runtimes;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
  std::string device;
  std::string devices;
  std::string prestart = "auto";
  std::string timings;
  std::optional<int> processes;
  std::optional<int> max_processes;
  std::string pairing = "in-process";
  bool same_inputs = false;
  policy_overrides looks;            // --rope, --probability: the looks' policy with --pair
  std::optional<double> exact_rope;  // the same from a job file, to the bit
  std::optional<double> exact_probability;
  std::optional<int> samples;
  std::optional<int> min_samples;
  std::optional<double> budget_ms;
  std::optional<double> timeout_s;
  std::string pair;
  bool self_check = false;
  std::string base_out;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::optional<std::int64_t> pull_request;
  bool quiet = false;
  bool fail_on_error = false;
  std::string shard;        // "K/N": only this shard's configurations (docs/scaling.md)
  std::string run_group;    // the shards' run group (default: from GitHub's environment)
  std::string shard_costs;  // a previous run document whose sampling times balance the split
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : fallback;
}

// --self-check: the working tree paired with itself is identical code, so every measured configuration must come
// out equivalent or abstain; a faster or slower is a bias of the measurement (which side is loaded, placed or run
// first), not of the code. Prints one line per configuration and returns whether none was faster or slower.
bool report_self_check(const run_document& base, const run_document& head, const gate_policy& policy) {
  const verdict_document v = stats::judge_runs(base, head, policy);
  int equivalent = 0;
  int biased = 0;
  int measured = 0;
  std::cerr << "\nself-check (the working tree paired with itself: both sides loaded separately, under distinct "
               "module names):\n";
  for (const auto& c : v.configs) {
    if (!c.ratio) continue;
    ++measured;
    equivalent += c.result == decision::equivalent;
    const bool wrong = c.result == decision::faster || c.result == decision::slower;
    biased += wrong;
    char line[320];
    std::snprintf(line, sizeof line, "  %-44s %-10s ratio %.4f [%.4f, %.4f]  mde %.2f%%  pairing %s%s\n",
                  c.key.label().c_str(), std::string(to_string(c.result)).c_str(), *c.ratio, c.ci_lo.value_or(NAN),
                  c.ci_hi.value_or(NAN), 100 * c.mde.value_or(NAN),
                  c.pairing == pairing_mode::none ? "-" : to_string(c.pairing).data(),
                  wrong ? "  <- identical code judged different" : "");
    std::cerr << line;
  }
  std::cerr << "rnx bench --self-check: " << equivalent << " of " << measured << " measured configurations equivalent, "
            << biased << " faster or slower at rope " << policy.rope
            << (biased ? " (identical code: the measurement is biased; see docs/runner.md, --self-check)" : "") << "\n";
  return biased == 0;
}

// --timings FILE: where the time went, as JSON, for the benchmark scripts (bench/devices_cpu.py,
// tests/device/scaling_gpu.sh).
void write_timings(const runner::bench_timing& timing, const std::string& path) {
  std::ofstream out(path);
  out << boost::json::serialize(runner::timing_json(timing)) << "\n";
  if (!out) {
    throw error(errc::usage, "--timings " + path + ": cannot write the file (pass a path in a writable folder)");
  }
}

// --shard K/N: this job's share of the suite, recorded in the run documents so the verdict can be formed over
// every shard of the run group (rnx gate --merge, or the service) and name the configurations of a missing one.
std::optional<shard_info> plan_shard_of(const bench_args& a, runner::bench_options& o) {
  if (a.shard.empty()) {
    if (!a.run_group.empty() || !a.shard_costs.empty()) {
      throw error(errc::usage, "rnx bench: --run-group and --shard-costs belong to a sharded run: add --shard K/N");
    }
    return std::nullopt;
  }
  const shard_spec spec = parse_shard(a.shard);
  std::string group = a.run_group;
  if (group.empty()) {
    group = github_run_group(env_or("GITHUB_SHA", ""), env_or("GITHUB_RUN_ID", ""), env_or("GITHUB_RUN_ATTEMPT", ""));
  }
  if (group.empty()) {
    throw error(errc::usage, "rnx bench --shard " + a.shard +
                                 ": no run group: pass --run-group NAME, the same in "
                                 "every shard of one run (in GitHub Actions it is GITHUB_SHA-GITHUB_RUN_ID-"
                                 "GITHUB_RUN_ATTEMPT)");
  }
  validate_run_group(group, "--run-group");
  std::map<config_key, double> costs;
  if (!a.shard_costs.empty()) costs = costs_from_run(read_run_file(a.shard_costs));
  shard_info info = runner::plan_shard(o, spec.index, spec.count, group, costs);
  if (!a.quiet) {
    std::cerr << "rnx bench: shard " << a.shard << " of run group " << group << ": " << o.only->size() << " of "
              << info.assignment.size() << " configurations (balanced by " << to_string(info.balanced_by) << ")\n";
  }
  return info;
}

// The manifest's absolute path, after checking the flags that go together; the run documents' folders (e.g.
// .rnx/) are made before the measurement rather than failing after it.
fs::path checked_config(const bench_args& a) {
  if (a.out.empty()) throw error(errc::usage, "rnx bench: --out FILE is required (where the run document goes)");
  if (a.self_check && !a.pair.empty()) {
    throw error(errc::usage, "rnx bench: --self-check pairs the working tree with itself; drop --pair " + a.pair +
                                 " (or drop --self-check to compare with " + a.pair + ")");
  }
  if (!a.pair.empty() && a.base_out.empty()) {
    throw error(errc::usage, "rnx bench: --pair needs --base-out FILE for the base revision's run document");
  }
  fs::path config = fs::absolute(a.config);
  if (!fs::exists(config)) {
    throw error(errc::not_found, a.config + ": no such manifest (pass --config PATH/rnx.toml)");
  }
  for (const std::string& out : {a.out, a.base_out}) {
    const fs::path folder = fs::path(out).parent_path();
    std::error_code ec;
    if (!out.empty() && !folder.empty()) fs::create_directories(folder, ec);
    if (ec) {
      throw error(errc::usage,
                  "cannot create the folder of " + out + ": " + ec.message() + " (pass a path in a writable folder)");
    }
  }
  return config;
}

// The runner's options from the flags; `policy` gets the [gate] policy with --rope and --probability applied.
runner::bench_options bench_options_of(const bench_args& a, const fs::path& config, gate_policy& policy) {
  runner::bench_options o;
  o.manifests = {config};
  o.filters = {a.kernels, a.runtimes, a.dtypes, a.batches};
  o.device = a.device;
  o.devices = a.devices;
  o.prestart = runner::parse_prestart_mode(a.prestart);
  o.processes = a.processes;
  o.max_processes = a.max_processes;
  o.in_process_pairing = pairing_mode_from_string(a.pairing) != pairing_mode::process;
  o.fresh_inputs = !a.same_inputs;
  policy = with_overrides(load_manifest(config).gate, a.looks);
  if (a.exact_rope) policy.rope = *a.exact_rope;
  if (a.exact_probability) policy.probability = *a.exact_probability;
  validate(policy);
  if (any_given(a.looks) || a.exact_rope || a.exact_probability) o.policy = policy;
  o.max_samples = a.samples;
  o.min_samples = a.min_samples;
  if (a.samples && !a.min_samples) o.min_samples = std::min(*a.samples, 8);
  o.budget_ms = a.budget_ms;
  o.timeout_s = a.timeout_s;
  o.log = a.quiet ? nullptr : &std::cerr;
  o.live = ::isatty(2) && env_or("CI", "").empty();
  return o;
}

// --pair REF: the base revision checked out in a worktree (alive while `worktree` is), its manifest added as the
// second side. Returns the base commit.
std::string add_pair_side(const bench_args& a, const fs::path& config, runner::bench_options& o,
                          std::unique_ptr<gate::scoped_worktree>& worktree) {
  const fs::path dir = config.parent_path();
  auto top = git(dir, {"rev-parse", "--show-toplevel"});
  if (!top) throw error(errc::usage, "--pair needs " + dir.string() + " to be inside a git repository");
  auto resolved = git(dir, {"rev-parse", "--verify", a.pair + "^{commit}"});
  if (!resolved) throw error(errc::usage, "--pair " + a.pair + ": not a commit of this repository (fetch it first)");
  worktree = std::make_unique<gate::scoped_worktree>(fs::path(*top), a.pair, "--pair");
  fs::path relative = fs::relative(config, fs::canonical(*top));
  fs::path base_config = worktree->path() / relative;
  if (!fs::exists(base_config)) {
    throw error(errc::not_found, "--pair " + a.pair + ": the base revision has no " + relative.string() +
                                     " (the manifest must exist on both sides)");
  }
  o.manifests.push_back(base_config);
  return *resolved;
}

// What the head run is filed under: the flags, else GitHub's environment, else git.
struct head_identity {
  std::string commit;
  std::string branch;
  std::string base_branch;
};

head_identity identify_head(const bench_args& a, const fs::path& dir) {
  head_identity id;
  id.commit = !a.commit.empty() ? a.commit : env_or("GITHUB_SHA", git(dir, {"rev-parse", "HEAD"}).value_or(""));
  id.branch = !a.branch.empty()
                  ? a.branch
                  : env_or("GITHUB_HEAD_REF",
                           env_or("GITHUB_REF_NAME", git(dir, {"rev-parse", "--abbrev-ref", "HEAD"}).value_or("")));
  id.base_branch = !a.base_branch.empty() ? a.base_branch : env_or("GITHUB_BASE_REF", "");
  if (id.commit.empty()) {
    // An empty string would read as a commit; the document leaves it out and says so here.
    std::cerr << "rnx bench: the commit is unknown (" << dir.string()
              << " is not in a git repository, and neither --commit nor GITHUB_SHA is set), so " << a.out
              << " records none; pass --commit SHA\n";
  }
  if (id.branch.empty()) {
    std::cerr << "rnx bench: the branch is unknown, so " << a.out
              << " records none; pass --branch NAME (rnx gate needs one to store the run)\n";
  }
  return id;
}

void print_time(const runner::bench_timing& timing) {
  char line[256];
  std::snprintf(line, sizeof line,
                "time: %.1f s in all: %d worker processes started in %.1f s, warm-up %.1f s, sampling %.1f s, "
                "other %.1f s\n",
                timing.total_s, timing.workers, timing.worker_start_s, timing.warmup_s, timing.sampling_s,
                std::max(0.0, timing.total_s - timing.worker_start_s - timing.warmup_s - timing.sampling_s));
  std::cerr << line;
}

// --fail-on-error: exit 1 when a configuration of either side is error or diverged (the documents are written).
void fail_on_errors(const std::vector<runner::bench_side>& sides, const std::string& base_label) {
  std::vector<std::string> failed;
  for (std::size_t s = 0; s < sides.size(); ++s) {
    for (const auto& r : sides[s].results) {
      if (r.status != result_status::error && r.status != result_status::diverged) continue;
      failed.push_back(r.key().label() + (s ? " (base " + base_label + ")" : "") + " " +
                       std::string(to_string(r.status)));
    }
  }
  if (failed.empty()) return;
  std::cerr << "rnx bench: " << failed.size() << " configuration" << (failed.size() == 1 ? "" : "s")
            << " failed (--fail-on-error, exit 1; the run document is written): ";
  for (std::size_t i = 0; i < failed.size(); ++i) std::cerr << (i ? ", " : "") << failed[i];
  std::cerr << "\n";
  exit_code() = 1;
}

void run(const bench_args& a) {
  const fs::path config = checked_config(a);
  const fs::path dir = config.parent_path();
  gate_policy policy;
  runner::bench_options o = bench_options_of(a, config, policy);
  const std::optional<shard_info> shard = plan_shard_of(a, o);
  std::unique_ptr<gate::scoped_worktree> worktree;
  std::string base_commit;
  if (!a.pair.empty()) base_commit = add_pair_side(a, config, o, worktree);
  // The same manifest twice: the worker loads the second copy under the base's module names, so the two sides
  // share no Python module, weights or inputs they would not share in a real paired run.
  if (a.self_check) o.manifests.push_back(config);
  const bool paired = o.manifests.size() > 1;
  const std::string base_label = a.self_check ? std::string("the working tree") : a.pair;

  runner::bench_timing timing;
  std::vector<runner::bench_side> sides = runner::run_bench(o, &timing);

  const head_identity id = identify_head(a, dir);
  if (a.self_check) base_commit = id.commit;
  if (sides.size() > 1) {
    if (sides[0].pairing) sides[0].pairing->partner_commit = base_commit;
    if (sides[1].pairing) sides[1].pairing->partner_commit = id.commit;
  }
  run_document head = runner::make_run_document(sides[0], id.commit, id.branch, id.base_branch, a.pull_request);
  head.shard = shard;
  write_run_file(head, a.out);
  if (!a.quiet) {
    std::cerr << "\n";
    runner::print_summary(std::cerr, head);
    std::cerr << "wrote " << a.out << " (env_id " << head.env.env_id << ")\n";
  }
  std::optional<run_document> base;
  if (paired) {
    base = runner::make_run_document(sides[1], base_commit, a.self_check ? id.branch : a.pair, "", std::nullopt);
    base->shard = shard;
    if (!a.base_out.empty()) write_run_file(*base, a.base_out);
    if (!a.quiet) {
      std::cerr << "\nbase " << base_label << " (" << base_commit.substr(0, 12) << "):\n";
      runner::print_summary(std::cerr, *base);
      if (!a.base_out.empty()) std::cerr << "wrote " << a.base_out << "\n";
    }
  }
  if (!a.quiet) {
    print_time(timing);
    if (!a.timings.empty()) runner::print_timing(std::cerr, timing);
  }
  if (!a.timings.empty()) write_timings(timing, a.timings);
  exit_code() = 0;
  if (a.self_check && !report_self_check(*base, head, policy)) exit_code() = 1;
  if (a.fail_on_error) fail_on_errors(sides, base_label);
}

// --job FILE stands for every option: one given beside it is refused, naming it.
void refuse_options_beside_job(const CLI::App& cmd) {
  for (const CLI::Option* option : cmd.get_options()) {
    if (option->count() == 0 || option->get_name() == "--job" || option->get_name() == "--help") continue;
    throw error(errc::usage,
                "--job takes every option from its file; drop " + option->get_name() + " (or edit the job file)");
  }
}

// The options a job file names, as the flags would have set them.
void apply_job(const bench_job& job, bench_args& a) {
  a.config = job.config;
  a.out = job.out;
  a.pair = job.pair_ref;
  a.base_out = job.base_out;
  a.kernels = job.kernels;
  a.runtimes = job.runtimes;
  a.dtypes = job.dtypes;
  a.batches = job.batches;
  a.quiet = job.quiet;
  a.processes = job.processes;
  a.max_processes = job.max_processes;
  a.budget_ms = job.budget_ms;
  a.exact_rope = job.rope;
  a.exact_probability = job.probability;
  a.shard = job.shard;
  a.run_group = job.run_group;
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<bench_args>();
  CLI::App* cmd = app.add_subcommand("bench", "Benchmark the kernels of rnx.toml and write a run document");
  cmd->add_option("--config", args->config, "The manifest")->capture_default_str();
  cmd->add_option("--out", args->out, "Where the run document goes (written atomically)");
  add_config_filter_options(*cmd, args->kernels, args->runtimes, args->dtypes, args->batches);
  cmd->add_option("--device", args->device, "Run every kernel on this device (cpu, cuda, cuda:N, auto)");
  cmd->add_option("--devices", args->devices,
                  "Measure configurations on these devices at once, each configuration (both sides) on one: "
                  "cuda:0,cuda:1 or CPU core sets cpu:0-3,cpu:4-7 (default: [bench] devices, else one device)");
  cmd->add_option("--prestart", args->prestart,
                  "Start each device's next worker while the current one measures (auto: on for CUDA devices)")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--timings", args->timings,
                  "Write where the time went (worker start by phase, each configuration's steps) to this JSON file "
                  "and print it as a table");
  cmd->add_option("--processes", args->processes, "Worker processes per configuration (with --pair: the first look)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--max-processes", args->max_processes,
                  "With --pair: add processes one look at a time up to this many while undecided")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--pairing", args->pairing,
                  "With --pair: in-process (base and head alternated in the same workers) or process")
      ->check(CLI::IsMember({"in-process", "process"}))
      ->capture_default_str();
  cmd->add_flag("--same-inputs", args->same_inputs,
                "Time every call on the same inputs (by default each timed call gets inputs no earlier call saw, "
                "from a pool of input sets redrawn before each use, so nothing cached per input is measured); for "
                "comparing with runs measured that way");
  // With --pair: the looks' band and probability (the probability spent over the looks).
  add_policy_options(*cmd, args->looks, {policy_option::rope, policy_option::probability}, "rnx.toml's [gate]");
  cmd->add_option("--samples", args->samples, "At most this many samples per process")->check(CLI::Range(1, 100000));
  cmd->add_option("--min-samples", args->min_samples, "At least this many samples per process")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--budget-ms", args->budget_ms, "Timed budget per configuration and process")
      ->check(CLI::Range(0.0, 3.6e6));
  cmd->add_option("--timeout", args->timeout_s, "Seconds before a silent configuration is killed")
      ->check(CLI::Range(0.1, 86400.0));
  cmd->add_option("--pair", args->pair, "Also benchmark this base revision, alternated with the head in blocks");
  cmd->add_option("--base-out", args->base_out, "Run document of the base revision (with --pair or --self-check)");
  cmd->add_flag("--self-check", args->self_check,
                "A/A guard: pair the working tree with itself (both sides loaded separately) and exit 1 when identical "
                "code comes out faster or slower");
  cmd->add_option("--commit", args->commit, "Commit recorded in the run (default: $GITHUB_SHA or git HEAD)");
  cmd->add_option("--branch", args->branch, "Branch recorded in the run (default: from GitHub or git)");
  cmd->add_option("--base-branch", args->base_branch, "Base branch recorded in the run (default: $GITHUB_BASE_REF)");
  cmd->add_option("--pull-request", args->pull_request, "Pull request number")->check(CLI::PositiveNumber);
  cmd->add_option("--shard", args->shard,
                  "K/N: measure only shard K of N of the suite (a CI matrix; judge with rnx gate --merge)");
  cmd->add_option("--run-group", args->run_group,
                  "With --shard: the run group shared by every shard (default: $GITHUB_SHA-$GITHUB_RUN_ID-"
                  "$GITHUB_RUN_ATTEMPT)");
  cmd->add_option("--shard-costs", args->shard_costs,
                  "With --shard: a previous run document; its sampling times balance the split (default: by count)");
  cmd->add_flag("--quiet", args->quiet, "No progress or summary on stderr");
  cmd->add_flag("--fail-on-error", args->fail_on_error,
                "Exit 1 when a configuration errors, times out or diverges from its reference (the documents are "
                "still written)");
  cmd->add_option("--job", args->job,
                  "Take every option from this job file (rnx.bench-job/v1, what rnx gate writes for its rnx bench "
                  "child); no other option with it");
  cmd->callback([args, cmd] {
    if (!args->job.empty()) {
      refuse_options_beside_job(*cmd);
      apply_job(read_bench_job(args->job), *args);
    }
    if (!args->device.empty() && !device_kind_from_string(args->device)) {
      throw error(errc::usage, "--device " + args->device + ": use cpu, cuda, cuda:N or auto");
    }
    run(*args);
  });
}

}  // namespace rnx::cli
