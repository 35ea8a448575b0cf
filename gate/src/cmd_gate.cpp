// `rnx gate`: benchmark (or take a run), upload, get the verdict, report to GitHub, exit 0/1/2.
#include "commands.hpp"

#include "gate_accept.hpp"
#include "gate_backend.hpp"
#include "gate_bench.hpp"
#include "gate_context.hpp"
#include "gate_drift.hpp"
#include "gate_merge.hpp"
#include "gate_paired.hpp"
#include "gate_report.hpp"
#include "gate_settings.hpp"
#include "git_command.hpp"
#include "github_api.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/report.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/common/text.hpp"
#include "rnx/stats/shards.hpp"
#include "rnx/stats/verdict.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

namespace rnx::cli {

namespace {

using namespace rnx::gate;

struct gate_options {
  std::string config = "rnx.toml";
  bool config_given = false;
  std::string results;       // a prepared head run instead of benchmarking
  std::string base_results;  // paired mode: a prepared base run instead of `rnx bench --pair`
  std::string mode;  // --mode (gate_mode); "" = auto: paired on pull requests whose base commit is here, else stored
  std::string pair_ref;
  backend_flags backend;
  policy_flags policy;
  std::string project;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::string pull_request;
  std::string out_dir = ".rnx";
  std::string report_key;
  std::string status_context = "rnx/benchmark";
  bool no_github = false;
  shard_flags sharding;  // --shard, --merge, --group-verdict (docs/scaling.md)
};

void apply_flags(github_context& ctx, const gate_options& o) {
  if (!o.commit.empty()) ctx.commit = o.commit;
  if (!o.branch.empty()) ctx.branch = o.branch;
  if (!o.base_branch.empty()) ctx.base_branch = o.base_branch;
  if (!o.pull_request.empty()) {
    char* end = nullptr;
    long long n = std::strtoll(o.pull_request.c_str(), &end, 10);
    if (end != o.pull_request.c_str() + o.pull_request.size() || n < 1) {
      throw error(errc::usage, "--pull-request \"" + o.pull_request + "\" is not a pull request number");
    }
    ctx.pull_request = n;
  }
}

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

verdict_document warn_verdict(const std::string& reason, const gate_policy& policy, const run_document& head) {
  verdict_document v;
  v.verdict = overall::warn;
  v.reason = reason;
  v.policy = policy;
  v.env_id = head.env.env_id;
  return v;
}

// The baseline store being down, slow or broken is never the pull request's fault.
bool is_outage(const error& e, bool embedded) {
  return e.code() == errc::unavailable || (embedded && e.code() == errc::internal);
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out) throw error(errc::usage, "cannot write " + path.string() + "; pass --out-dir with a writable folder");
}

// report.html beside verdict.json: the stored run's pages (embedded store: overview, histories, evidence; service:
// evidence), or, paired or without a store, the evidence page drawn from the documents in hand.
void write_html_report(const std::filesystem::path& path, baseline_backend* backend,
                       const std::optional<uploaded_run>& upload, bool paired, const run_document& head,
                       const std::optional<run_document>& base, const verdict_document& verdict) {
  std::vector<pages::page> report;
  if (backend && upload && !paired) {
    try {
      report = backend->report_pages(head.project, upload->id);
    } catch (const error& e) {
      std::cout << "rnx gate: report.html shows this job's documents only: " << terminal_safe(e.what()) << "\n";
    }
  }
  if (report.empty()) {
    pages::link_style links;
    links.report = true;
    auto data =
        pages::run_data(head, upload ? upload->id : "local", base ? &*base : nullptr, base ? "base" : "", &verdict);
    report.push_back(pages::run_page(data, links));
  }
  const std::filesystem::path temp = path.string() + ".tmp";
  write_text(temp, pages::render_report(report, head.project + " " + head.commit.substr(0, 12)));
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) throw error(errc::usage, "cannot write " + path.string() + ": " + ec.message());
}

void report_to_github(const github_context& ctx, const gate_options& o, const verdict_document& verdict,
                      const report_facts& facts, const std::string& project) {
  if (o.no_github || ctx.event == event_kind::local || ctx.repository.empty()) return;
  const std::string token = env_or_empty("GITHUB_TOKEN");
  if (token.empty()) {
    std::cout << "::notice title=rnx::"
              << escape_command_data("no GITHUB_TOKEN (the github-token input): no PR comment or commit status")
              << "\n";
    return;
  }
  github_api github(ctx.api_url, ctx.repository, token);
  auto warn = [](const std::string& what, const error& e) {
    std::cout << "::warning title=rnx::" << escape_command_data("could not " + what + ": " + e.what()) << "\n";
  };
  if (ctx.event == event_kind::pull_request && ctx.pull_request) {
    const std::string key =
        project + (o.report_key.empty() ? (ctx.job.empty() ? "" : "/" + ctx.job) : "/" + o.report_key);
    try {
      github.upsert_comment(*ctx.pull_request, comment_marker(key),
                            render_comment(verdict, facts, comment_marker(key)));
    } catch (const error& e) {
      warn(ctx.pull_request_from_fork ? "comment on this pull request from a fork (its token is read-only)"
                                      : "comment on the pull request",
           e);
    }
  }
  if (!ctx.commit.empty()) {
    auto [state, description] = commit_status(verdict);
    try {
      github.post_status(ctx.commit, state, o.status_context, description, ctx.run_url);
    } catch (const error& e) {
      warn("set the commit status " + o.status_context, e);
    }
  }
}

// Confirmed mode: the configurations the stored baseline calls slower are measured again, base and head
// interleaved process by process in this job (`rnx bench --pair` at the baseline's own commit), and the paired
// decision replaces the stored one. A whole run measured in a fast or slow spell of a shared machine then
// cannot block by itself. Returns the report's note.
std::string confirm_slower(verdict_document& verdict, const gate_options& o, const resolved_policy& policy,
                           const std::filesystem::path& out_dir) {
  std::vector<std::string> kernels;
  std::size_t slower = 0;
  for (const auto& c : verdict.configs) {
    if (c.result != decision::slower) continue;
    ++slower;
    if (std::find(kernels.begin(), kernels.end(), c.key.kernel) == kernels.end()) kernels.push_back(c.key.kernel);
  }
  if (slower == 0) return {};
  const std::string commit = verdict.baseline ? verdict.baseline->commit : std::string();
  const std::string what =
      std::to_string(slower) + " configuration" + (slower == 1 ? "" : "s") + " slower against the stored baseline";
  if (commit.empty()) return what + " not re-measured: the baseline run names no commit";
#ifdef RNX_HAVE_TORCH
  bench_request request;
  request.config = o.config;
  request.out = (out_dir / "confirm-run.json").string();
  request.pair_ref = commit;
  request.base_out = (out_dir / "confirm-base-run.json").string();
  request.kernels = kernels;
  request.rope = policy.policy.rope;
  request.probability = policy.policy.probability;
  bench_outcome outcome;
  try {
    outcome = run_bench(request);
  } catch (const error& e) {
    return what + " not re-measured, so the stored verdict stands: " + e.what();
  }
  const verdict_document paired = stats::judge_runs(*outcome.base, outcome.head, policy.policy);
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
  verdict.verdict = stats::overall_answer(verdict.configs, policy.policy, verdict.reason);
  return what + " " + remeasured + " in this job: " + std::to_string(confirmed) + " confirmed";
#else
  (void)o;
  (void)policy;
  (void)out_dir;
  (void)kernels;
  return what + " not re-measured: this rnx was built without the runner (RNX_WITH_TORCH=OFF)";
#endif
}

// The base revision of a pull request as this checkout can reach it: --pair-ref, the event's base commit, or the
// base branch (origin/BRANCH, then BRANCH); "" when none is a commit here (a shallow clone, say).
std::string reachable_base(const gate_options& o, const github_context& ctx) {
  const std::filesystem::path dir = std::filesystem::absolute(o.config).parent_path();
  std::vector<std::string> candidates;
  if (!o.pair_ref.empty()) candidates.push_back(o.pair_ref);
  if (!ctx.base_commit.empty()) candidates.push_back(ctx.base_commit);
  if (!ctx.base_branch.empty()) candidates.insert(candidates.end(), {"origin/" + ctx.base_branch, ctx.base_branch});
  for (const auto& ref : candidates) {
    if (is_commit(dir, ref)) return ref;
  }
  return {};
}

// One `rnx gate` job as it goes through its steps: what was measured, stored and judged, and what the report says.
struct gate_job {
  gate_options o;
  github_context ctx;
  gate_mode mode = gate_mode::stored;
  bool paired = false;  // paired mode on a pull request (a push is stored, never paired)
  std::optional<manifest> m;
  resolved_policy policy;
  std::string project;
  std::filesystem::path out_dir;
  std::string pair_ref;  // paired: the base revision measured beside the head
  run_document head;
  std::optional<run_document> base;
  report_facts facts;
  verdict_document verdict;
  std::unique_ptr<baseline_backend> backend;
  bool embedded = false;  // the embedded store rather than rnx-server
  std::optional<uploaded_run> upload;
  std::string drift_report;             // [gate] drift_budget: the check's Markdown, "" when no budget is set
  std::optional<merged_shards> shards;  // --merge: the shards' documents, each side merged

  const manifest* manifest_ptr() const { return m ? &*m : nullptr; }
};

// Events the gate does not measure on: answered here, with the exit code set. False for a gating event.
bool answer_non_gating_event(const github_context& ctx, const gate_options& o) {
  if (ctx.event == event_kind::unsupported) {
    std::cout << "rnx gate: nothing to do on a " << ctx.event_name
              << " event (it gates pull_request, push and /rnx accept comments)\n";
    exit_code() = 0;
    return true;
  }
  if (ctx.event == event_kind::issue_comment) {
    exit_code() = accept_from_comment(ctx, comment_accept_settings::from_flags(o));
    return true;
  }
  return false;
}

// --mode, or the automatic choice: paired is the decisive comparison (both revisions measured side by side in
// this job); it needs the base revision in the checkout; a push is a new baseline, and a prepared run has no
// base run beside it. A local run with --pull-request stands for a pull request. Sets o.pair_ref when it
// picks paired.
gate_mode choose_mode(gate_options& o, const github_context& ctx) {
  if (!o.mode.empty()) {
    auto mode = gate_mode_from_string(o.mode);
    if (!mode) throw error(errc::usage, "--mode \"" + o.mode + "\" must be stored, paired or confirmed");
    return *mode;
  }
  const bool pull_request = ctx.event == event_kind::pull_request ||
                            (ctx.event == event_kind::local && ctx.pull_request && !ctx.base_branch.empty());
  std::string base_here;
  if (pull_request && o.results.empty()) base_here = reachable_base(o, ctx);
  if (!base_here.empty()) {
    if (o.pair_ref.empty()) o.pair_ref = base_here;
    std::cout << "rnx gate: paired mode: the base revision " << base_here << " is measured beside the head in "
              << "this job (--mode stored compares with the stored baseline instead)\n";
    return gate_mode::paired;
  }
  if (pull_request && o.results.empty()) {
    std::cout << "rnx gate: stored mode: the base revision ("
              << (ctx.base_commit.empty() ? ctx.base_branch : ctx.base_commit)
              << ") is not in this checkout, so the stored baseline decides; check out with fetch-depth: 0 for "
                 "the paired comparison\n";
  }
  return gate_mode::stored;
}

// The base revision a paired job measures: --pair-ref, else what this checkout reaches, else the event's base.
std::string paired_base_ref(const gate_options& o, const github_context& ctx) {
  std::string ref = !o.pair_ref.empty() ? o.pair_ref : reachable_base(o, ctx);
  if (ref.empty() && !ctx.base_commit.empty()) ref = ctx.base_commit;
  if (ref.empty() && o.base_results.empty()) {
    throw error(errc::usage,
                "paired mode needs the base revision: pass --pair-ref REF (e.g. origin/main) or "
                "--base-branch");
  }
  return ref;
}

// The mode, the manifest and the policy in force: everything decided before anything is measured.
gate_job plan_gate(gate_options o, github_context ctx) {
  gate_job job;
  job.mode = choose_mode(o, ctx);
  job.paired = job.mode == gate_mode::paired && ctx.event != event_kind::push_like;
  if (job.mode == gate_mode::paired && !job.paired) {
    std::cout << "rnx gate: a push is stored as the new baseline; paired mode applies to pull requests\n";
  }
  // A prepared run needs no manifest; benchmarking does.
  const bool prepared = !o.results.empty() || !o.sharding.merge.empty() || o.sharding.group_verdict;
  job.m = load_manifest_if_present(o.config, o.config_given || !prepared);
  job.policy = resolve_policy(job.manifest_ptr(), o.policy, ctx.runner_environment);
  job.project = !o.project.empty() ? o.project : job.m ? job.m->project : std::string();
  job.out_dir = o.out_dir;
  if (job.paired && o.sharding.merge.empty()) job.pair_ref = paired_base_ref(o, ctx);
  job.o = std::move(o);
  job.ctx = std::move(ctx);
  return job;
}

// A push stores a run that moves its branch's baseline; a pull request's run (a local one with --pull-request) does
// not. A local push, like a GitHub one, has already landed: its regression is reported, not failed.
bool is_push_run(const github_context& ctx) {
  return ctx.event == event_kind::push_like || (ctx.event == event_kind::local && !ctx.pull_request);
}

// A service that cannot be reached, and a missing or refused token, are found out before the benchmark, not after
// it. A service that does not answer is one line on standard error (the URL and the cause), and the job goes on
// as when the service is down; the token is checked only where something is to be measured.
void check_service(const gate_job& job) {
  if (const std::string line = service_unreachable_line(job.o.backend, job.manifest_ptr()); !line.empty()) {
    std::cerr << terminal_safe(line) << "\n";
    return;
  }
  if (!job.o.results.empty() || job.shards) return;
  check_access_before_measuring(job.o.backend, job.manifest_ptr(), job.project, is_push_run(job.ctx),
                                job.ctx.pull_request_from_fork && env_or_empty("RNX_TOKEN").empty());
}

// `rnx bench` (with --pair in paired mode) measures the head and, paired, the base beside it.
void bench_head_and_base(gate_job& job) {
#ifdef RNX_HAVE_TORCH
  bench_request request;
  request.config = job.o.config;
  request.out = (job.out_dir / "run.json").string();
  request.shard = job.o.sharding.shard;
  request.run_group = job.o.sharding.run_group;
  if (job.paired && job.o.base_results.empty()) {
    request.pair_ref = job.pair_ref;
    request.base_out = (job.out_dir / "base-run.json").string();
    request.rope = job.policy.policy.rope;
    request.probability = job.policy.policy.probability;
  }
  auto outcome = run_bench(request);
  job.head = std::move(outcome.head);
  job.base = std::move(outcome.base);
  if (job.paired && !job.o.base_results.empty()) job.base = read_run_file(job.o.base_results);
#else
  (void)job;
  throw error(errc::usage,
              "this rnx was built without the runner (RNX_WITH_TORCH=OFF): pass --results RUN.json "
              "from `rnx bench` on a machine that has it");
#endif
}

// The head run (and, paired, the base run): the prepared files given, or measured now.
void measure(gate_job& job) {
  if (job.shards) {
    // --merge: the shards' runs put together; paired when their base runs came with them.
    job.head = job.shards->head.merged;
    if (job.paired && !job.shards->base) {
      throw error(errc::usage,
                  "--mode paired with --merge needs the shards' base runs (rnx bench --base-out) among "
                  "the files");
    }
    if (job.paired) {
      job.base = job.shards->base->merged;
      job.pair_ref = job.base->commit;
    }
    return;
  }
  if (job.o.results.empty()) {
    bench_head_and_base(job);
    return;
  }
  job.head = read_run_file(job.o.results);
  if (!job.paired) return;
  if (job.o.base_results.empty()) {
    throw error(errc::usage,
                "paired mode with --results needs --base-results BASE.json (the base revision's "
                "run), or drop --results to let rnx bench --pair measure both");
  }
  job.base = read_run_file(job.o.base_results);
}

// The head run, filed under what GitHub says was measured, checked and written to OUT/run.json.
void file_head_run(gate_job& job) {
  stamp_run(job.head, job.ctx, job.project);
  std::error_code ec;
  std::filesystem::create_directories(job.out_dir, ec);
  if (ec) throw error(errc::usage, "cannot create --out-dir " + job.o.out_dir + ": " + ec.message());
  check_filing(job.head, job.o.results.empty() ? "the run rnx bench measured" : job.o.results, job.o.config);
  write_run_file(job.head, (job.out_dir / "run.json").string());
  const gate_mode reported = job.paired                         ? gate_mode::paired
                             : job.mode == gate_mode::confirmed ? gate_mode::confirmed
                                                                : gate_mode::stored;
  job.facts.mode = std::string(to_string(reported));
  job.facts.event = std::string(to_string(job.ctx.event));
  job.facts.commit = job.head.commit;
  job.facts.runner_label = job.policy.runner_label;
}

// Uploads the head run and, outside paired mode, asks the backend's verdict. An outage of the store (or a fork's
// pull request without RNX_TOKEN) gives a WARN verdict instead of failing the job.
void store_and_judge(gate_job& job) {
  job.embedded = resolve_service_url(job.o.backend, job.manifest_ptr()).url.empty();
  try {
    job.backend = open_backend(job.o.backend, job.manifest_ptr()).backend;
    job.facts.backend = job.backend->describe();
    job.upload = job.backend->upload(job.head);
    job.facts.run_id = job.upload->id;
    std::cout << "rnx gate: stored run " << job.upload->id << " in the " << job.backend->describe()
              << (job.upload->already_stored ? " (it was uploaded before)" : "")
              << (job.upload->baseline ? " as a baseline of " + job.head.branch : std::string()) << "\n";
    if (!job.paired) job.verdict = job.backend->judge(job.upload->id, job.policy.policy);
  } catch (const error& e) {
    // GitHub passes no secrets to pull requests from forks: without RNX_TOKEN the service must refuse,
    // and that is no reason to fail a contributor's build.
    const bool fork_without_token =
        e.code() == errc::unauthorized && job.ctx.pull_request_from_fork && env_or_empty("RNX_TOKEN").empty();
    if (!is_outage(e, job.embedded) && !fork_without_token) throw;
    const std::string where = job.backend    ? "the " + job.backend->describe()
                              : job.embedded ? "the embedded store"
                                             : std::string("the baseline service");
    if (job.paired) {
      job.facts.note = "the run was not stored for history: " + where + " failed (" + e.what() + ")";
    } else {
      job.verdict = warn_verdict(fork_without_token
                                     ? "this pull request comes from a fork, which gets no RNX_TOKEN secret, so " +
                                           where + " refused the run and it was not judged"
                                     : where + " is unavailable, so this run was not judged: " + std::string(e.what()),
                                 job.policy.policy, job.head);
    }
  }
}

// On a pull request judged against the stored baseline: how an intended slowdown becomes the baseline.
void offer_accept(gate_job& job) {
  // A paired verdict is against the base revision itself, which no accepted baseline changes.
  const bool pull_request =
      job.ctx.event == event_kind::pull_request || (job.ctx.event == event_kind::local && job.ctx.pull_request);
  if (!pull_request || job.paired) return;
  const std::string location = job.embedded ? (job.o.backend.store.empty() ? ".rnx/baselines.db" : job.o.backend.store)
                                            : resolve_service_url(job.o.backend, job.manifest_ptr()).url;
  job.facts.accept_hint =
      accept_hint({job.ctx.event == event_kind::pull_request, job.embedded, location, job.facts.run_id});
}

// The final job of a sharded matrix with a store the shards uploaded to: the run group's verdict, once every shard
// has arrived or the group is due, reported like any verdict (one comment, one status).
void judge_group(gate_job& job) {
  const std::string group = resolve_run_group(job.o.sharding, "--group-verdict");
  if (job.project.empty()) {
    throw error(errc::usage,
                "--group-verdict: no project: set [project] name in " + job.o.config + " or pass --project NAME");
  }
  job.head.project = job.project;
  job.head.commit = job.ctx.commit;
  job.head.branch = job.ctx.branch;
  job.head.base_branch = job.ctx.base_branch;
  std::error_code ec;
  std::filesystem::create_directories(job.out_dir, ec);
  if (ec) throw error(errc::usage, "cannot create --out-dir " + job.o.out_dir + ": " + ec.message());
  job.facts.mode = std::string(to_string(gate_mode::stored));
  job.facts.event = std::string(to_string(job.ctx.event));
  job.facts.commit = job.head.commit;
  job.facts.runner_label = job.policy.runner_label;
  job.embedded = resolve_service_url(job.o.backend, job.manifest_ptr()).url.empty();
  try {
    job.backend = open_backend(job.o.backend, job.manifest_ptr()).backend;
    job.facts.backend = job.backend->describe();
    job.verdict = await_group_verdict(*job.backend, job.project, group, job.policy.policy, job.o.sharding.group_wait_s);
    if (!job.verdict.head_run_id.empty()) {
      job.upload = uploaded_run{job.verdict.head_run_id, false, false};
      job.facts.run_id = job.verdict.head_run_id;
    }
  } catch (const error& e) {
    if (!is_outage(e, job.embedded)) throw;
    const std::string where = job.backend ? "the " + job.backend->describe() : std::string("the baseline store");
    job.verdict = warn_verdict(where + " is unavailable, so run group " + group + " was not judged: " + e.what(),
                               job.policy.policy, job.head);
  }
}

// Paired: the verdict is the head against the base measured beside it.
void judge_paired(gate_job& job) {
  job.verdict = stats::judge_runs(*job.base, job.head, job.policy.policy);
  job.verdict.baseline = baseline_ref{"paired:" + (job.pair_ref.empty() ? job.o.base_results : job.pair_ref),
                                      job.base->commit, job.base->created_at};
  job.verdict.head_run_id = job.facts.run_id;
}

// Paired: the base run and the verdict kept on the service beside the head run, so the run page the comment links
// to shows what this job decided. A failure of the store is a note in the report, never a different verdict.
void store_paired(gate_job& job) {
  if (!job.upload || !job.backend || !job.base) return;
  auto stored = store_paired_verdict(*job.backend, *job.base, job.upload->id, job.head, job.policy.policy, job.verdict);
  if (stored.note.empty()) return;
  std::cout << "rnx gate: " << terminal_safe(stored.note) << "\n";
  job.facts.note += (job.facts.note.empty() ? "" : "; ") + stored.note;
}

// The drift check's paired measurement, for a job that measures paired itself (not --results, not --merge): the
// head beside the anchor's commit, `rnx bench --pair` as bench_head_and_base measures head and base, only the
// configurations the anchor's stored run left undecided or called over budget. Empty where this job cannot
// benchmark.
measure_beside_anchor drift_measurement(const gate_job& job) {
#ifdef RNX_HAVE_TORCH
  if (!job.paired || !job.o.results.empty() || job.shards) return {};
  return [config = job.o.config, out_dir = job.out_dir, probability = job.policy.policy.probability](
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
  (void)job;
  return {};
#endif
}

// [gate] drift_budget: a pull request's head is also judged against the anchor's stored run, and, where that
// leaves a configuration undecided or over budget and the job measures paired, against the anchor's commit measured
// beside it (gate_drift.cpp).
void check_drift_budget(gate_job& job) {
  const bool pull_request =
      job.ctx.event == event_kind::pull_request || (job.ctx.event == event_kind::local && job.ctx.pull_request);
  if (!pull_request || !job.backend) return;
  job.drift_report = gate_drift_check(
      job.verdict, *job.backend, job.head,
      {job.o.config, job.out_dir, job.head.base_branch, job.facts.run_id, drift_measurement(job)}, job.policy.policy);
}

// A run that became its branch's baseline (a push, or a local run on the base branch) says so, and the first one
// does not also ask for a baseline.
void note_new_baseline(gate_job& job) {
  if (!job.upload || !job.upload->baseline || job.paired) return;
  if (job.verdict.baseline) {
    job.verdict.reason =
        "stored as the newest baseline of " + job.head.branch + "; against the previous one: " + job.verdict.reason;
    return;
  }
  job.verdict.reason = "stored as the first baseline of " + job.head.branch + " in environment " + job.head.env.env_id +
                       "; there is nothing earlier to compare it with";
  for (auto& c : job.verdict.configs) {
    if (c.result == decision::new_config) c.reason = "first baseline: nothing earlier to compare with";
  }
}

// The stored run's page on the service, and the recent medians the report draws as sparklines.
void add_history(gate_job& job) {
  if (!job.upload || !job.backend) return;
  if (!job.embedded) {
    std::string url = resolve_service_url(job.o.backend, job.manifest_ptr()).url;
    while (!url.empty() && url.back() == '/') url.pop_back();
    job.facts.run_url = url + "/runs/" + job.upload->id;
  }
  try {
    const run_document& head = job.head;
    const std::string branch = head.base_branch.empty() ? head.branch : head.base_branch;
    std::map<config_key, std::vector<double>> recent;
    for (auto& h : job.backend->recent_medians(head.project, branch, head.env.env_id, 20)) {
      recent[h.key] = std::move(h.medians);
    }
    for (const auto& r : head.results) {
      auto it = recent.find(r.key());
      if (it != recent.end() && it->second.size() >= 2) job.facts.history.emplace_back(r.key().label(), it->second);
    }
  } catch (const error& e) {
    std::cout << "rnx gate: no recent history for the sparklines: " << terminal_safe(e.what()) << "\n";
  }
}

// The verdict on the terminal, in OUT/verdict.json, report.md and report.html, the step summary, the step's
// outputs, and on GitHub (comment and commit status).
void publish(const gate_job& job) {
  const verdict_document& verdict = job.verdict;
  const std::string report =
      render_report(verdict, job.facts) + (job.drift_report.empty() ? "" : "\n" + job.drift_report);
  std::cout << render_verdict_text(verdict);
  if (!job.facts.run_url.empty()) std::cout << "rnx gate: the run's page: " << terminal_safe(job.facts.run_url) << "\n";
  if (verdict.verdict == overall::block && !job.facts.accept_hint.empty()) std::cout << job.facts.accept_hint << "\n";
  if (job.ctx.in_actions) {
    for (const auto& line : annotations(verdict)) std::cout << line << "\n";
  }
  const std::filesystem::path verdict_path = job.out_dir / "verdict.json";
  write_text(verdict_path, json::serialize(to_json(verdict), true));
  write_text(job.out_dir / "report.md", report);
  const std::filesystem::path html_path = job.out_dir / "report.html";
  write_html_report(html_path, job.backend.get(), job.upload, job.paired, job.head, job.base, verdict);
  if (!job.ctx.step_summary_path.empty()) append_file(job.ctx.step_summary_path, report + "\n");
  if (!job.ctx.output_path.empty()) {
    write_outputs(job.ctx.output_path, {{"verdict", std::string(to_string(verdict.verdict))},
                                        {"run-id", job.facts.run_id},
                                        {"reason", verdict.reason},
                                        {"report", report},
                                        {"verdict-file", verdict_path.string()},
                                        {"report-html", html_path.string()}});
  }
  report_to_github(job.ctx, job.o, verdict, job.facts, job.head.project);
}

void run_gate(gate_options o) {
  github_context ctx = read_github_context(process_env());
  apply_flags(ctx, o);
  if (answer_non_gating_event(ctx, o)) return;
  check_shard_flags(o.sharding, !o.results.empty());
  std::optional<merged_shards> shards;
  if (!o.sharding.merge.empty()) {
    shards = read_shard_files(o.sharding.merge);
    if (o.mode.empty()) o.mode = shards->base ? "paired" : "stored";
  }
  gate_job job = plan_gate(std::move(o), std::move(ctx));
  job.shards = std::move(shards);
  if (job.o.sharding.group_verdict) {
    judge_group(job);
  } else {
    check_service(job);
    measure(job);
    file_head_run(job);
    if (job.head.shard) {
      // A shard job reports nothing: the matrix's final job does, once (docs/scaling.md).
      hand_in_shard(job.head, job.paired, job.base.has_value(), job.o.backend, job.manifest_ptr(), job.o.out_dir,
                    job.ctx.output_path);
      exit_code() = 0;
      return;
    }
    store_and_judge(job);
  }
  offer_accept(job);
  if (job.mode == gate_mode::confirmed && job.ctx.event == event_kind::pull_request) {
    if (auto note = confirm_slower(job.verdict, job.o, job.policy, job.out_dir); !note.empty()) {
      std::cout << "rnx gate: " << terminal_safe(note) << "\n";
      job.facts.note = note;
    }
  }
  if (job.paired) {
    judge_paired(job);
    store_paired(job);
  }
  check_drift_budget(job);
  if (job.shards) stats::add_missing_shards(job.verdict, job.shards->head, job.policy.policy);
  note_new_baseline(job);
  add_history(job);
  publish(job);
  // A push has already landed: its regression is reported (annotation, status, summary), and failing the job
  // would only hide the stored baseline behind a red mark that no one can fix by re-running.
  const bool push_run = is_push_run(job.ctx);
  if (job.verdict.verdict == overall::block && push_run) {
    std::cout << "rnx gate: a push is not failed for a regression: the run is stored as the newest baseline of "
              << terminal_safe(job.head.branch) << " either way\n";
  }
  exit_code() = job.verdict.verdict == overall::block && !push_run ? 1 : 0;
}

}  // namespace

void add_gate_command(CLI::App& app) {
  auto o = std::make_shared<gate_options>();
  auto* cmd = app.add_subcommand(
      "gate", "CI gate: benchmark, upload, verdict, report to GitHub (exit 0 PASS/WARN, 1 BLOCK, 2 bad config)");
  auto* config = cmd->add_option("--config", o->config, "The manifest")->capture_default_str();
  cmd->add_option("--results", o->results, "A prepared head run (rnx.run/v1) instead of running rnx bench");
  cmd->add_option("--base-results", o->base_results, "Paired mode: a prepared base run instead of rnx bench --pair");
  cmd->add_option("--mode", o->mode,
                  "paired: against the base revision measured in this job (the default on pull "
                  "requests whose base commit is checked out); stored: against the stored "
                  "baseline (the default otherwise); confirmed: stored, and what it calls slower "
                  "is measured again paired at the baseline's commit before it can block");
  cmd->add_option("--pair-ref", o->pair_ref, "Paired mode's base revision (default: the PR's base commit)");
  add_backend_flags(*cmd, o->backend);
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
  cmd->callback([o, config] {
    gate_options options = *o;
    options.config_given = config->count() > 0 && !options.config.empty();
    if (options.config.empty()) options.config = "rnx.toml";
    run_gate(options);
  });
}

}  // namespace rnx::cli
