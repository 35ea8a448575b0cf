// `rnx accept`: make a run (an intended slowdown) the new baseline of its base branch.
#include "commands.hpp"

#include "gate_accept.hpp"
#include "gate_context.hpp"
#include "gate_settings.hpp"

#include "rnx/common/error.hpp"

#include <cstdlib>
#include <iostream>
#include <memory>

namespace rnx::cli {

namespace {

using namespace rnx::gate;

struct accept_options {
  std::string run_id;
  std::int64_t pull_request = 0;
  std::string branch;
  std::string commit;
  std::string reason;
  std::string by;
  std::string config = "rnx.toml";
  bool config_given = false;
  std::string project;
  backend_flags backend;
  std::string status_context = "rnx/benchmark";
};

void run_accept(const accept_options& o) {
  github_context ctx = read_github_context(process_env());
  if (o.run_id.empty() && o.pull_request == 0) {
    if (ctx.event != event_kind::issue_comment) {
      throw error(errc::usage,
                  "name the run to accept: --run-id ID (as `rnx gate` printed it) or --pull-request N "
                  "--branch HEAD_BRANCH; inside GitHub Actions, run it on an issue_comment event");
    }
    exit_code() = accept_from_comment(ctx, comment_accept_settings::from_flags(o));
    return;
  }
  if (!o.run_id.empty() && o.pull_request != 0) {
    throw error(errc::usage, "--run-id and --pull-request name the run twice; pass one of them");
  }
  std::string by = !o.by.empty() ? o.by : env_or_empty("GITHUB_ACTOR");
  if (by.empty()) by = env_or_empty("USER");
  if (by.empty()) {
    throw error(errc::usage, "say who accepts the run: --by NAME (neither GITHUB_ACTOR nor USER is set to default to)");
  }
  if (o.reason.empty()) throw error(errc::usage, "say why the slowdown is intended: --reason \"...\"");

  auto m = load_manifest_if_present(o.config, o.config_given);
  auto choice = open_backend(o.backend, m ? &*m : nullptr);
  std::vector<std::string> ids;
  if (!o.run_id.empty()) {
    ids.push_back(o.run_id);
  } else {
    const std::string project = !o.project.empty() ? o.project : m ? m->project : std::string();
    if (project.empty())
      throw error(errc::usage, "--pull-request needs the project: pass --project or --config rnx.toml");
    if (o.branch.empty()) throw error(errc::usage, "--pull-request needs --branch: the pull request's head branch");
    for (const auto& run : pull_request_runs(*choice.backend, project, o.branch, o.pull_request, o.commit)) {
      ids.push_back(run.id);
    }
    if (ids.empty()) {
      throw error(errc::not_found, "no run of pull request #" + std::to_string(o.pull_request) + " on branch " +
                                       o.branch + (o.commit.empty() ? "" : " at commit " + o.commit) +
                                       " is stored in the " + choice.backend->describe());
    }
  }
  for (const auto& id : ids) {
    try {
      auto accepted = choice.backend->accept(id, by, o.reason);
      std::cout << "rnx accept: run " << id << " (environment " << accepted.env_id << ") is now the baseline of "
                << accepted.branch << " in the " << choice.backend->describe() << " (accepted by " << by << ")\n";
    } catch (const error& e) {
      if (e.code() != errc::conflict) throw;
      std::cout << "rnx accept: run " << id << " already is the newest baseline (" << e.what() << ")\n";
    }
  }
  exit_code() = 0;
}

}  // namespace

void add_accept_command(CLI::App& app) {
  auto o = std::make_shared<accept_options>();
  auto* cmd = app.add_subcommand("accept", "Accept a run (an intended slowdown) as its base branch's new baseline");
  cmd->add_option("--run-id", o->run_id, "The run to accept, as `rnx gate` printed it");
  cmd->add_option("--pull-request", o->pull_request, "Accept the newest run of each environment of this PR")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--branch", o->branch, "With --pull-request: the PR's head branch");
  cmd->add_option("--commit", o->commit, "With --pull-request: only runs of this commit");
  cmd->add_option("--reason", o->reason, "Why the slowdown is intended (recorded with the baseline)");
  cmd->add_option("--by", o->by,
                  "Who accepts, recorded with the baseline (default: $GITHUB_ACTOR, else $USER; required when "
                  "neither is set)");
  auto* config =
      cmd->add_option("--config", o->config, "The manifest (project name, [service] url)")->capture_default_str();
  cmd->add_option("--project", o->project, "Project name (default: [project] name of the manifest)");
  add_backend_flags(*cmd, o->backend);
  cmd->add_option("--status-context", o->status_context, "Commit status context (comment flow)")->capture_default_str();
  cmd->callback([o, config] {
    accept_options options = *o;
    options.config_given = config->count() > 0 && !options.config.empty();
    if (options.config.empty()) options.config = "rnx.toml";
    run_accept(options);
  });
}

}  // namespace rnx::cli
