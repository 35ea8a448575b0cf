// `rnx gate`: benchmark (or take a run), upload, get the verdict, report to GitHub, exit 0/1/2.
#include "commands.hpp"

#include "gate_accept.hpp"
#include "gate_backend.hpp"
#include "gate_bench.hpp"
#include "gate_context.hpp"
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
  std::string mode;  // "" = auto: paired on pull requests whose base commit is here, else stored
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
    throw error(errc::usage, source + ": $.project is empty: set [project] name in " + config + " or pass --project NAME");
  }
  if (run.branch.empty()) {
    throw error(errc::usage, source + ": $.branch is empty and nothing else names the branch measured (no git "
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
    auto data = pages::run_data(head, upload ? upload->id : "local", base ? &*base : nullptr, base ? "base" : "",
                                &verdict);
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
    const std::string key = project + (o.report_key.empty() ? (ctx.job.empty() ? "" : "/" + ctx.job) : "/" + o.report_key);
    try {
      github.upsert_comment(*ctx.pull_request, comment_marker(key), render_comment(verdict, facts, comment_marker(key)));
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
  const std::string what = std::to_string(slower) + " configuration" + (slower == 1 ? "" : "s") +
                           " slower against the stored baseline";
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

void run_gate(gate_options o) {
  github_context ctx = read_github_context(process_env());
  apply_flags(ctx, o);
  if (ctx.event == event_kind::unsupported) {
    std::cout << "rnx gate: nothing to do on a " << ctx.event_name
              << " event (it gates pull_request, push and /rnx accept comments)\n";
    exit_code() = 0;
    return;
  }
  if (ctx.event == event_kind::issue_comment) {
    exit_code() = accept_from_comment(ctx, comment_accept_settings::from_flags(o));
    return;
  }
  if (o.mode.empty()) {
    // Paired is the decisive comparison: both revisions measured side by side in this job. It needs the base
    // revision in the checkout; a push is a new baseline, and a prepared run has no base run beside it.
    // A local run with --pull-request stands for one too.
    const bool pull_request = ctx.event == event_kind::pull_request ||
                              (ctx.event == event_kind::local && ctx.pull_request && !ctx.base_branch.empty());
    std::string base_here;
    if (pull_request && o.results.empty()) base_here = reachable_base(o, ctx);
    o.mode = base_here.empty() ? "stored" : "paired";
    if (o.mode == "paired") {
      if (o.pair_ref.empty()) o.pair_ref = base_here;
      std::cout << "rnx gate: paired mode: the base revision " << base_here << " is measured beside the head in "
                << "this job (--mode stored compares with the stored baseline instead)\n";
    } else if (pull_request && o.results.empty()) {
      std::cout << "rnx gate: stored mode: the base revision ("
                << (ctx.base_commit.empty() ? ctx.base_branch : ctx.base_commit)
                << ") is not in this checkout, so the stored baseline decides; check out with fetch-depth: 0 for "
                   "the paired comparison\n";
    }
  }
  if (o.mode != "stored" && o.mode != "paired" && o.mode != "confirmed") {
    throw error(errc::usage, "--mode \"" + o.mode + "\" must be stored, paired or confirmed");
  }
  const bool paired = o.mode == "paired" && ctx.event != event_kind::push_like;
  if (o.mode == "paired" && !paired) {
    std::cout << "rnx gate: a push is stored as the new baseline; paired mode applies to pull requests\n";
  }

  // A prepared run needs no manifest; benchmarking does.
  auto m = load_manifest_if_present(o.config, o.config_given || o.results.empty());
  const resolved_policy policy = resolve_policy(m ? &*m : nullptr, o.policy, ctx.runner_environment);
  const std::string project = !o.project.empty() ? o.project : m ? m->project : std::string();
  const std::filesystem::path out_dir(o.out_dir);

  run_document head;
  std::optional<run_document> base;
  std::string pair_ref;
  if (paired) {
    pair_ref = !o.pair_ref.empty() ? o.pair_ref : reachable_base(o, ctx);
    if (pair_ref.empty() && !ctx.base_commit.empty()) pair_ref = ctx.base_commit;
    if (pair_ref.empty() && o.base_results.empty()) {
      throw error(errc::usage, "paired mode needs the base revision: pass --pair-ref REF (e.g. origin/main) or "
                               "--base-branch");
    }
  }
  // A push stores a run that moves its branch's baseline; a pull request's run (a local one with --pull-request) does
  // not. A missing or refused token is found out before the benchmark, not after it.
  const bool push_run = ctx.event == event_kind::push_like || (ctx.event == event_kind::local && !ctx.pull_request);
  if (o.results.empty()) {
    check_access_before_measuring(o.backend, m ? &*m : nullptr, project, push_run,
                                  ctx.pull_request_from_fork && env_or_empty("RNX_TOKEN").empty());
  }
  if (!o.results.empty()) {
    head = read_run_file(o.results);
    if (paired) {
      if (o.base_results.empty()) {
        throw error(errc::usage, "paired mode with --results needs --base-results BASE.json (the base revision's "
                                 "run), or drop --results to let rnx bench --pair measure both");
      }
      base = read_run_file(o.base_results);
    }
  } else {
#ifdef RNX_HAVE_TORCH
    bench_request request;
    request.config = o.config;
    request.out = (out_dir / "run.json").string();
    if (paired && o.base_results.empty()) {
      request.pair_ref = pair_ref;
      request.base_out = (out_dir / "base-run.json").string();
      request.rope = policy.policy.rope;
      request.probability = policy.policy.probability;
    }
    auto outcome = run_bench(request);
    head = std::move(outcome.head);
    base = std::move(outcome.base);
    if (paired && !o.base_results.empty()) base = read_run_file(o.base_results);
#else
    throw error(errc::usage, "this rnx was built without the runner (RNX_WITH_TORCH=OFF): pass --results RUN.json "
                             "from `rnx bench` on a machine that has it");
#endif
  }
  stamp_run(head, ctx, project);
  {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec) throw error(errc::usage, "cannot create --out-dir " + o.out_dir + ": " + ec.message());
  }
  check_filing(head, o.results.empty() ? "the run rnx bench measured" : o.results, o.config);
  write_run_file(head, (out_dir / "run.json").string());

  report_facts facts;
  facts.mode = paired ? "paired" : o.mode == "confirmed" ? "confirmed" : "stored";
  facts.event = std::string(to_string(ctx.event));
  facts.commit = head.commit;
  facts.runner_label = policy.runner_label;

  verdict_document verdict;
  std::unique_ptr<baseline_backend> backend;
  const bool embedded = resolve_service_url(o.backend, m ? &*m : nullptr).url.empty();
  std::optional<uploaded_run> upload;
  try {
    backend = open_backend(o.backend, m ? &*m : nullptr).backend;
    facts.backend = backend->describe();
    upload = backend->upload(head);
    facts.run_id = upload->id;
    std::cout << "rnx gate: stored run " << upload->id << " in the " << backend->describe()
              << (upload->already_stored ? " (it was uploaded before)" : "")
              << (upload->baseline ? " as a baseline of " + head.branch : std::string()) << "\n";
    if (!paired) verdict = backend->judge(upload->id, policy.policy);
  } catch (const error& e) {
    // GitHub passes no secrets to pull requests from forks: without RNX_TOKEN the service must refuse,
    // and that is no reason to fail a contributor's build.
    const bool fork_without_token = e.code() == errc::unauthorized && ctx.pull_request_from_fork &&
                                    env_or_empty("RNX_TOKEN").empty();
    if (!is_outage(e, embedded) && !fork_without_token) throw;
    const std::string where = backend ? "the " + backend->describe()
                                      : embedded ? "the embedded store" : std::string("the baseline service");
    if (paired) {
      facts.note = "the run was not stored for history: " + where + " failed (" + e.what() + ")";
    } else {
      verdict = warn_verdict(fork_without_token
                                 ? "this pull request comes from a fork, which gets no RNX_TOKEN secret, so the " +
                                       where + " refused the run and it was not judged"
                                 : where + " is unavailable, so this run was not judged: " + std::string(e.what()),
                             policy.policy, head);
    }
  }
  // A paired verdict is against the base revision itself, which no accepted baseline changes.
  const bool pull_request = ctx.event == event_kind::pull_request || (ctx.event == event_kind::local && ctx.pull_request);
  if (pull_request && !paired) {
    const std::string location = embedded ? (o.backend.store.empty() ? ".rnx/baselines.db" : o.backend.store)
                                          : resolve_service_url(o.backend, m ? &*m : nullptr).url;
    facts.accept_hint = accept_hint({ctx.event == event_kind::pull_request, embedded, location, facts.run_id});
  }
  if (o.mode == "confirmed" && ctx.event == event_kind::pull_request) {
    if (auto note = confirm_slower(verdict, o, policy, out_dir); !note.empty()) {
      std::cout << "rnx gate: " << terminal_safe(note) << "\n";
      facts.note = note;
    }
  }
  if (paired) {
    verdict = stats::judge_runs(*base, head, policy.policy);
    verdict.baseline = baseline_ref{"paired:" + (pair_ref.empty() ? o.base_results : pair_ref), base->commit,
                                    base->created_at};
    verdict.head_run_id = facts.run_id;
    if (upload && backend) {
      auto stored = store_paired_verdict(*backend, *base, upload->id, head, policy.policy, verdict);
      if (!stored.note.empty()) {
        std::cout << "rnx gate: " << terminal_safe(stored.note) << "\n";
        facts.note += (facts.note.empty() ? "" : "; ") + stored.note;
      }
    }
  }
  // A run that became its branch's baseline (a push, or a local run on the base branch) says so, and the first
  // one does not also ask for a baseline.
  if (upload && upload->baseline && !paired) {
    if (verdict.baseline) {
      verdict.reason = "stored as the newest baseline of " + head.branch + "; against the previous one: " +
                       verdict.reason;
    } else {
      verdict.reason = "stored as the first baseline of " + head.branch + " in environment " + head.env.env_id +
                       "; there is nothing earlier to compare it with";
      for (auto& c : verdict.configs) {
        if (c.result == decision::new_config) c.reason = "first baseline: nothing earlier to compare with";
      }
    }
  }

  if (upload && backend) {
    if (!embedded) {
      std::string url = resolve_service_url(o.backend, m ? &*m : nullptr).url;
      while (!url.empty() && url.back() == '/') url.pop_back();
      facts.run_url = url + "/runs/" + upload->id;
    }
    try {
      const std::string branch = head.base_branch.empty() ? head.branch : head.base_branch;
      std::map<config_key, std::vector<double>> recent;
      for (auto& h : backend->recent_medians(head.project, branch, head.env.env_id, 20)) {
        recent[h.key] = std::move(h.medians);
      }
      for (const auto& r : head.results) {
        auto it = recent.find(r.key());
        if (it != recent.end() && it->second.size() >= 2) facts.history.emplace_back(r.key().label(), it->second);
      }
    } catch (const error& e) {
      std::cout << "rnx gate: no recent history for the sparklines: " << terminal_safe(e.what()) << "\n";
    }
  }
  const std::string report = render_report(verdict, facts);
  std::cout << render_verdict_text(verdict);
  if (verdict.verdict == overall::block && !facts.accept_hint.empty()) std::cout << facts.accept_hint << "\n";
  if (ctx.in_actions) {
    for (const auto& line : annotations(verdict)) std::cout << line << "\n";
  }
  const std::filesystem::path verdict_path = out_dir / "verdict.json";
  write_text(verdict_path, json::serialize(to_json(verdict), true));
  write_text(out_dir / "report.md", report);
  const std::filesystem::path html_path = out_dir / "report.html";
  write_html_report(html_path, backend.get(), upload, paired, head, base, verdict);
  if (!ctx.step_summary_path.empty()) append_file(ctx.step_summary_path, report + "\n");
  if (!ctx.output_path.empty()) {
    write_outputs(ctx.output_path, {{"verdict", std::string(to_string(verdict.verdict))},
                                    {"run-id", facts.run_id},
                                    {"reason", verdict.reason},
                                    {"report", report},
                                    {"verdict-file", verdict_path.string()},
                                    {"report-html", html_path.string()}});
  }
  report_to_github(ctx, o, verdict, facts, head.project);
  // A push has already landed: its regression is reported (annotation, status, summary), and failing
  // the job would only hide the stored baseline behind a red mark that no one can fix by re-running.
  if (verdict.verdict == overall::block && push_run) {
    std::cout << "rnx gate: a push is not failed for a regression: the run is stored as the newest baseline of "
              << terminal_safe(head.branch) << " either way\n";
  }
  exit_code() = verdict.verdict == overall::block && !push_run ? 1 : 0;
}

}  // namespace

void add_gate_command(CLI::App& app) {
  auto o = std::make_shared<gate_options>();
  auto* cmd = app.add_subcommand(
      "gate", "CI gate: benchmark, upload, verdict, report to GitHub (exit 0 PASS/WARN, 1 BLOCK, 2 bad config)");
  auto* config = cmd->add_option("--config", o->config, "The manifest")->capture_default_str();
  cmd->add_option("--results", o->results, "A prepared head run (rnx.run/v1) instead of running rnx bench");
  cmd->add_option("--base-results", o->base_results, "Paired mode: a prepared base run instead of rnx bench --pair");
  cmd->add_option("--mode", o->mode, "paired: against the base revision measured in this job (the default on pull "
                                     "requests whose base commit is checked out); stored: against the stored "
                                     "baseline (the default otherwise); confirmed: stored, and what it calls slower "
                                     "is measured again paired at the baseline's commit before it can block");
  cmd->add_option("--pair-ref", o->pair_ref, "Paired mode's base revision (default: the PR's base commit)");
  add_backend_flags(*cmd, o->backend);
  add_policy_flags(*cmd, o->policy);
  cmd->add_option("--project", o->project, "Project name (default: [project] name of the manifest)");
  cmd->add_option("--commit", o->commit, "Commit measured (default: from GitHub's event)");
  cmd->add_option("--branch", o->branch, "Branch measured (default: from GitHub's event)");
  cmd->add_option("--base-branch", o->base_branch, "Branch whose baseline to compare with");
  cmd->add_option("--pull-request", o->pull_request, "Pull request number (outside GitHub)");
  cmd->add_option("--out-dir", o->out_dir, "Folder for run.json, verdict.json and report.md")->capture_default_str();
  cmd->add_option("--report-key", o->report_key, "Distinguishes the PR comments of several gate jobs (default: the job id)");
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
