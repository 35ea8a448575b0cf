// Reads GitHub Actions' environment and event payload into a gate context.
#include "gate_context.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace rnx::gate {

namespace bj = boost::json;

std::string_view to_string(event_kind kind) {
  switch (kind) {
    case event_kind::local: return "local";
    case event_kind::pull_request: return "pull_request";
    case event_kind::push_like: return "push";
    case event_kind::issue_comment: return "issue_comment";
    case event_kind::unsupported: return "unsupported";
  }
  return "unsupported";
}

env_lookup process_env() {
  return [](std::string_view name) {
    const char* value = std::getenv(std::string(name).c_str());
    return value ? std::string(value) : std::string();
  };
}

std::string branch_of_ref(std::string_view ref) {
  constexpr std::string_view heads = "refs/heads/";
  if (ref.substr(0, heads.size()) == heads) return std::string(ref.substr(heads.size()));
  return {};
}

namespace {

// The payload is GitHub's: fields are read leniently (GitHub adds members over time), but the few
// the gate needs must be there, and their absence names the file and the field.
const bj::value* member(const bj::value& v, std::initializer_list<std::string_view> path) {
  const bj::value* at = &v;
  for (auto key : path) {
    const auto* object = at->if_object();
    if (!object) return nullptr;
    auto it = object->find(key);
    if (it == object->end() || it->value().is_null()) return nullptr;
    at = &it->value();
  }
  return at;
}

std::string path_text(std::initializer_list<std::string_view> path) {
  std::string text = "$";
  for (auto key : path) text += "." + std::string(key);
  return text;
}

std::string required_string(const bj::value& payload, const std::string& source,
                            std::initializer_list<std::string_view> path) {
  const bj::value* v = member(payload, path);
  if (!v || !v->is_string()) {
    throw error(errc::bad_input, source + ": " + path_text(path) +
                                     ": expected a string in the event payload; is GITHUB_EVENT_PATH the file "
                                     "GitHub wrote for this event?");
  }
  return std::string(v->get_string());
}

std::string optional_string(const bj::value& payload, std::initializer_list<std::string_view> path) {
  const bj::value* v = member(payload, path);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

std::int64_t required_integer(const bj::value& payload, const std::string& source,
                              std::initializer_list<std::string_view> path) {
  const bj::value* v = member(payload, path);
  if (v && v->is_int64()) return v->get_int64();
  if (v && v->is_uint64()) return static_cast<std::int64_t>(v->get_uint64());
  throw error(errc::bad_input, source + ": " + path_text(path) + ": expected an integer in the event payload");
}

event_kind kind_of_event(std::string_view name) {
  if (name == "pull_request" || name == "pull_request_target") return event_kind::pull_request;
  if (name == "push" || name == "schedule" || name == "workflow_dispatch") return event_kind::push_like;
  if (name == "issue_comment") return event_kind::issue_comment;
  return event_kind::unsupported;
}

}  // namespace

github_context read_github_context(const env_lookup& env) {
  github_context ctx;
  ctx.in_actions = env("GITHUB_ACTIONS") == "true";
  ctx.event_name = env("GITHUB_EVENT_NAME");
  ctx.repository = env("GITHUB_REPOSITORY");
  if (auto api = env("GITHUB_API_URL"); !api.empty()) ctx.api_url = api;
  while (!ctx.api_url.empty() && ctx.api_url.back() == '/') ctx.api_url.pop_back();
  if (auto server = env("GITHUB_SERVER_URL"); !server.empty()) ctx.server_url = server;
  ctx.job = env("GITHUB_JOB");
  ctx.runner_environment = env("RUNNER_ENVIRONMENT");
  ctx.step_summary_path = env("GITHUB_STEP_SUMMARY");
  ctx.output_path = env("GITHUB_OUTPUT");
  if (auto run_id = env("GITHUB_RUN_ID"); !run_id.empty() && !ctx.repository.empty()) {
    ctx.run_url = ctx.server_url + "/" + ctx.repository + "/actions/runs/" + run_id;
  }
  if (ctx.event_name.empty()) {
    ctx.event = event_kind::local;
    ctx.event_name = "local";
    return ctx;
  }
  ctx.event = kind_of_event(ctx.event_name);
  if (ctx.event == event_kind::unsupported) return ctx;

  const std::string event_path = env("GITHUB_EVENT_PATH");
  if (event_path.empty()) {
    throw error(errc::usage, "GITHUB_EVENT_NAME is \"" + ctx.event_name +
                                 "\" but GITHUB_EVENT_PATH is not set; run inside GitHub Actions or unset "
                                 "GITHUB_EVENT_NAME to use flags");
  }
  const bj::value payload = json::parse_file(event_path);
  if (!payload.is_object()) throw error(errc::bad_input, event_path + ": expected a JSON object (the event payload)");
  if (ctx.repository.empty()) ctx.repository = optional_string(payload, {"repository", "full_name"});

  switch (ctx.event) {
    case event_kind::pull_request: {
      ctx.pull_request = required_integer(payload, event_path, {"pull_request", "number"});
      ctx.commit = required_string(payload, event_path, {"pull_request", "head", "sha"});
      ctx.branch = required_string(payload, event_path, {"pull_request", "head", "ref"});
      ctx.base_branch = required_string(payload, event_path, {"pull_request", "base", "ref"});
      ctx.base_commit = optional_string(payload, {"pull_request", "base", "sha"});
      const std::string head_repo = optional_string(payload, {"pull_request", "head", "repo", "full_name"});
      ctx.pull_request_from_fork = !head_repo.empty() && !ctx.repository.empty() && head_repo != ctx.repository;
      break;
    }
    case event_kind::push_like: {
      const std::string ref = env("GITHUB_REF");
      // GITHUB_REF is what was checked out; the payload's ref only stands in when it is unset.
      ctx.branch = branch_of_ref(ref.empty() ? optional_string(payload, {"ref"}) : ref);
      if (ctx.branch.empty()) {
        throw error(errc::usage, "GITHUB_REF \"" + ref +
                                     "\" is not a branch; run the gate on pushes to branches (on: push: branches: "
                                     "[main]), not on tags");
      }
      ctx.base_branch = ctx.branch;
      ctx.commit = optional_string(payload, {"after"});
      if (ctx.commit.empty()) ctx.commit = env("GITHUB_SHA");
      break;
    }
    case event_kind::issue_comment: {
      ctx.comment_on_pull_request = member(payload, {"issue", "pull_request"}) != nullptr;
      ctx.pull_request = required_integer(payload, event_path, {"issue", "number"});
      ctx.comment_id = required_integer(payload, event_path, {"comment", "id"});
      ctx.comment_body = required_string(payload, event_path, {"comment", "body"});
      ctx.comment_author = required_string(payload, event_path, {"comment", "user", "login"});
      break;
    }
    default: break;
  }
  return ctx;
}

std::optional<accept_command> parse_accept_command(std::string_view body) {
  std::size_t start = 0;
  while (start < body.size() && std::isspace(static_cast<unsigned char>(body[start]))) ++start;
  std::string_view line = body.substr(start);
  line = line.substr(0, line.find('\n'));
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.remove_suffix(1);
  constexpr std::string_view command = "/rnx accept";
  if (line.size() < command.size()) return std::nullopt;
  for (std::size_t i = 0; i < command.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != command[i]) return std::nullopt;
  }
  std::string_view rest = line.substr(command.size());
  if (!rest.empty() && !std::isspace(static_cast<unsigned char>(rest.front()))) return std::nullopt;  // "/rnx acceptx"
  while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
  return accept_command{std::string(rest)};
}

}  // namespace rnx::gate
