// The CI context `rnx gate` acts in: GitHub Actions' environment and event payload, or flags outside it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::gate {

// What triggered the gate. push_like covers push, schedule and workflow_dispatch: a run of a branch
// itself, stored as that branch's baseline.
enum class event_kind { local, pull_request, push_like, issue_comment, unsupported };
std::string_view to_string(event_kind kind);

struct github_context {
  bool in_actions = false;  // GITHUB_ACTIONS=true
  event_kind event = event_kind::local;
  std::string event_name;  // as GitHub names it ("pull_request", "push", ...), "local" outside Actions
  std::string repository;  // owner/name
  std::string api_url = "https://api.github.com";
  std::string server_url = "https://github.com";
  std::string run_url;             // link to this workflow run, for the commit status; "" outside Actions
  std::string job;                 // GITHUB_JOB
  std::string runner_environment;  // RUNNER_ENVIRONMENT: github-hosted | self-hosted | ""

  std::string commit;       // the commit that is measured: a PR's head, a push's after-sha
  std::string branch;       // the branch measured (a PR's head ref)
  std::string base_branch;  // the branch compared with (a PR's base ref; a push's own branch)
  std::string base_commit;  // a PR's base sha (the paired mode's default base revision)
  std::optional<std::int64_t> pull_request;
  bool pull_request_from_fork = false;  // a fork's GITHUB_TOKEN cannot comment or post statuses

  // issue_comment only.
  bool comment_on_pull_request = false;
  std::int64_t comment_id = 0;
  std::string comment_body;
  std::string comment_author;

  std::string step_summary_path;  // GITHUB_STEP_SUMMARY
  std::string output_path;        // GITHUB_OUTPUT
};

// Looks up an environment variable; "" when unset. Tests pass a map instead of the process environment.
using env_lookup = std::function<std::string(std::string_view)>;
env_lookup process_env();

// Reads GITHUB_* variables and the event payload at GITHUB_EVENT_PATH. Outside Actions (no
// GITHUB_EVENT_NAME) the event is local. A missing or malformed payload is rnx::error(bad_input)
// naming the file and the field.
github_context read_github_context(const env_lookup& env);

// "/rnx accept [reason...]" as the first line of a comment (case of the command ignored).
struct accept_command {
  std::string reason;
};
std::optional<accept_command> parse_accept_command(std::string_view comment_body);

// "refs/heads/main" -> "main"; "" for tags and other refs.
std::string branch_of_ref(std::string_view ref);

}  // namespace rnx::gate
