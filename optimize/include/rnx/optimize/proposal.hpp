// Proposing a kept rewrite: one commit on a new branch rnx/optimize/<kernel>-<n> made with git plumbing (the
// working tree, the index and the current branch are never touched), then optionally a pull request through
// the GitHub REST API.
#pragma once

#include <filesystem>
#include <cstdint>
#include <optional>
#include <string>

namespace rnx::optimize {

struct commit_request {
  std::filesystem::path repo;  // any folder inside the repository
  std::string kernel;          // names the branch
  std::filesystem::path file;  // the file to replace (absolute, inside the repository)
  std::string new_source;
  std::string message;  // full commit message: title line, blank line, body (committed unlinked: no mention or
                        // reference is live; and through the secret scan)
};

struct commit_proposal {
  std::string branch;        // rnx/optimize/<kernel>-<n>
  std::string commit;        // its sha
  std::string parent;        // the sha it was made on (HEAD)
  std::string base_branch;   // HEAD's branch name, "" when detached
  std::string path_in_repo;  // the replaced file, relative to the repository root
  std::filesystem::path toplevel;
};

// n is one more than the largest existing rnx/optimize/<kernel>-<n> (local or remote-tracking), so reruns never
// overwrite a proposal. Throws rnx::error(usage) when `repo` is not a git repository or the file lies outside it,
// rnx::error(internal) when git fails unexpectedly (with its stderr).
commit_proposal create_proposal_commit(const commit_request& request);

struct pull_request_options {
  std::string api_url;            // $GITHUB_API_URL, else https://api.github.com
  std::string repository;         // owner/name; $GITHUB_REPOSITORY
  std::string token;              // $GITHUB_TOKEN
  std::string remote = "origin";  // the branch is pushed here first
  std::string base;               // the PR's base branch
  std::string title;
  std::string body;
  int retries = 2;  // after a 5xx or network failure
  double timeout_s = 30;
};

struct pull_request {
  std::int64_t number = 0;
  std::string html_url;
};

// Pushes the branch to the remote (git push REMOTE BRANCH), then POSTs /repos/{repository}/pulls.
// Throws rnx::error(usage) for a missing token/repository/base (naming the variable to set),
// unauthorized/forbidden for a rejected token, invalid for a 422 (with GitHub's message), unavailable otherwise.
pull_request open_pull_request(const commit_proposal& proposal, const pull_request_options& options);

}  // namespace rnx::optimize
