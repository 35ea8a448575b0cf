// Accepting a pull request's run as its base branch's new baseline: by `/rnx accept` comment or by flags.
#pragma once

#include "gate_backend.hpp"
#include "gate_context.hpp"
#include "gate_settings.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace rnx::gate {

// The newest run of each environment that pull request `number` uploaded at `commit` (any commit when
// empty), among the runs of `branch` (the PR's head ref).
std::vector<stored_run_ref> pull_request_runs(baseline_backend& backend, const std::string& project,
                                              const std::string& branch, std::int64_t number,
                                              const std::string& commit);

struct comment_accept_settings {
  std::string config;  // rnx.toml, for the project name and [service] url
  bool config_required = false;
  std::string project;  // overrides the manifest's
  backend_flags backend;
  std::string github_token;
  std::string status_context = "rnx/benchmark";

  // From the flags that `rnx gate` and `rnx accept` share (config, config_given, project, backend,
  // status_context) and GITHUB_TOKEN.
  template <class Flags>
  static comment_accept_settings from_flags(const Flags& o) {
    comment_accept_settings s;
    s.config = o.config;
    s.config_required = o.config_given;
    s.project = o.project;
    s.backend = o.backend;
    s.github_token = env_or_empty("GITHUB_TOKEN");
    s.status_context = o.status_context;
    return s;
  }
};

// The issue_comment flow: ignore comments that are not `/rnx accept`; check the commenter's
// permission through the REST API; accept the newest run of each environment at the PR's head commit;
// reply in the thread, react to the command, set the commit status. Returns the exit code: 0 accepted
// (or nothing to do, or the service down: WARN), 1 refused (no write permission), 2 no run to accept.
int accept_from_comment(const github_context& ctx, const comment_accept_settings& settings);

}  // namespace rnx::gate
