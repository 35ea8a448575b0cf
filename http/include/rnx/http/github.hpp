// rnx's one GitHub REST client: the gate's calls (PR comments updated in place, commit statuses, collaborator
// permission and pull request lookups, issues, reactions) and the optimizer's (a pull request opened), all against
// GITHUB_API_URL with GitHub's versioned JSON media type, every failure a typed rnx::error with GitHub's message.
#pragma once

#include "rnx/http/client.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::http {

// A pull request GitHub opened.
struct opened_pull_request {
  std::int64_t number = 0;
  std::string html_url;
};

struct pull_request_info {
  std::int64_t number = 0;
  std::string head_sha;
  std::string head_ref;
  std::string base_ref;
  std::string state;  // open | closed
};

// Every call throws rnx::error: unavailable (network, 5xx, rate limit: worth another try), unauthorized/forbidden
// (401/403: a token without the permission; a fork's read-only token), not_found (404), invalid (another 4xx, with
// GitHub's message and each of its errors[]), bad_input (a response that is not the JSON GitHub documents).
class github_api {
 public:
  // api_url: e.g. https://api.github.com (no trailing slash); repository: owner/name.
  // user_agent names the caller to GitHub ("rnx-gate", "rnx-optimize").
  github_api(std::string api_url, std::string repository, std::string token,
             std::chrono::milliseconds timeout = std::chrono::seconds(20), std::string user_agent = "rnx-gate");

  bool has_token() const { return !token_.empty(); }
  const std::string& repository() const { return repository_; }

  // Finds the newest comment on issue/PR `number` that starts with `marker` and replaces its body, or
  // creates one. Returns the comment id. The marker keeps the gate to one comment per PR and job.
  std::int64_t upsert_comment(std::int64_t number, std::string_view marker, const std::string& body);
  std::int64_t create_comment(std::int64_t number, const std::string& body);
  // Opens an issue; returns its number.
  std::int64_t create_issue(const std::string& title, const std::string& body);
  // state: success | failure | error | pending; description is cut to GitHub's 140 characters.
  void post_status(const std::string& sha, std::string_view state, std::string_view context,
                   std::string_view description, const std::string& target_url);
  // The `permission` GitHub reports: "admin", "write" (also for the maintain role), "read" (also triage)
  // or "none"; a 404 (not a collaborator) is "none".
  std::string permission_of(const std::string& login);
  pull_request_info pull_request(std::int64_t number);
  // A reaction on an issue comment (e.g. "+1", "-1", "eyes") to acknowledge a command.
  void react_to_comment(std::int64_t comment_id, std::string_view content);
  // Opens a pull request from branch `head` into `base`, which maintainers may edit.
  opened_pull_request open_pull_request(const std::string& title, const std::string& head, const std::string& base,
                                        const std::string& body);

 private:
  http::response call(std::string_view method, const std::string& url, const std::string& body);
  std::string repo_url(std::string_view rest) const;

  std::string api_url_;
  std::string repository_;
  std::string token_;
  std::chrono::milliseconds timeout_;
  std::string user_agent_;
};

// The URL of rel="next" in a Link header ("" when there is none).
std::string next_page_url(std::string_view link_header);

// True when `permission` (from permission_of) may accept a baseline: write or admin.
bool can_write(std::string_view permission);

}  // namespace rnx::http
