// Git plumbing for the proposal commit, and the pull request opened through rnx's GitHub client.
#include "rnx/optimize/proposal.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/text.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/retry.hpp"
#include "rnx/common/secret_scan.hpp"
#include "rnx/http/github.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <utility>
#include <unistd.h>

namespace rnx::optimize {

namespace fs = std::filesystem;

namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
  return s;
}

struct git {
  fs::path dir;
  std::map<std::string, std::string> env;

  process_result try_run(const std::vector<std::string>& args, const std::string& input = {}) const {
    std::vector<std::string> argv{"git", "-C", dir.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    process_options o;
    o.env_set = env;
    o.input = input;
    o.timeout = std::chrono::minutes(2);
    return run_process(argv, o);
  }
  std::string run(const std::vector<std::string>& args, const std::string& input = {}) const {
    process_result r = try_run(args, input);
    if (r.exit_code != 0) {
      std::string cmd = "git";
      for (const auto& a : args) cmd += " " + a;
      throw error(errc::internal, "'" + cmd + "' in " + dir.string() + " failed: " + tail_lines(r.err, 5));
    }
    return trimmed(r.out);
  }
};

}  // namespace

commit_proposal create_proposal_commit(const commit_request& request) {
  git g{request.repo, {}};
  process_result top = g.try_run({"rev-parse", "--show-toplevel"});
  if (top.exit_code != 0) {
    throw error(errc::usage, request.repo.string() +
                                 " is not inside a git repository; rnx optimize proposes its "
                                 "rewrite as a commit, so run it in a clone (or pass --no-commit)");
  }
  commit_proposal p;
  p.toplevel = fs::canonical(trimmed(top.out));
  fs::path file = fs::weakly_canonical(request.file);
  fs::path rel = file.lexically_relative(p.toplevel);
  if (rel.empty() || rel.begin()->string() == "..") {
    throw error(errc::usage, file.string() + " lies outside the repository " + p.toplevel.string());
  }
  p.path_in_repo = rel.generic_string();
  g.dir = p.toplevel;
  p.parent = g.run({"rev-parse", "--verify", "HEAD^{commit}"});
  process_result branch = g.try_run({"symbolic-ref", "--quiet", "--short", "HEAD"});
  p.base_branch = branch.exit_code == 0 ? trimmed(branch.out) : "";

  // The next free number: proposals of earlier runs (here or already pushed) stay untouched.
  std::string prefix = "rnx/optimize/" + request.kernel + "-";
  std::string refs = g.run({"for-each-ref", "--format=%(refname)", "refs/heads/rnx/optimize/", "refs/remotes/"});
  int n = 0;
  std::size_t pos = 0;
  while (pos < refs.size()) {
    std::size_t end = refs.find('\n', pos);
    std::string ref = refs.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? refs.size() : end + 1;
    std::size_t at = ref.find(prefix);
    if (at == std::string::npos) continue;
    std::string num = ref.substr(at + prefix.size());
    if (!num.empty() && num.find_first_not_of("0123456789") == std::string::npos) n = std::max(n, std::stoi(num));
  }
  p.branch = prefix + std::to_string(n + 1);

  // The file's mode in HEAD (an executable kernel stays executable); a file new to HEAD is a plain file.
  std::string mode = "100644";
  std::string listed = g.run({"ls-tree", "HEAD", "--", p.path_in_repo});
  if (!listed.empty()) mode = listed.substr(0, listed.find(' '));
  std::string blob = g.run({"hash-object", "-w", "--stdin"}, request.new_source);

  // A private index, so the user's staged changes are neither used nor disturbed.
  fs::path index = fs::temp_directory_path() / ("rnx-optimize-index-" + std::to_string(::getpid()));
  git staged{p.toplevel, {{"GIT_INDEX_FILE", index.string()}}};
  std::string tree;
  try {
    staged.run({"read-tree", "HEAD"});
    staged.run({"update-index", "--add", "--cacheinfo", mode + "," + blob + "," + p.path_in_repo});
    tree = staged.run({"write-tree"});
  } catch (...) {
    fs::remove(index);
    throw;
  }
  fs::remove(index);

  // CI checkouts often have no identity configured; a commit needs one.
  git committer = g;
  if (trimmed(g.try_run({"config", "user.email"}).out).empty()) {
    committer.env = {{"GIT_AUTHOR_NAME", "rnx optimize"},
                     {"GIT_AUTHOR_EMAIL", "rnx-optimize@users.noreply.github.com"},
                     {"GIT_COMMITTER_NAME", "rnx optimize"},
                     {"GIT_COMMITTER_EMAIL", "rnx-optimize@users.noreply.github.com"}};
  }
  // GitHub links @mentions and issue references in a commit message whatever Markdown it holds, code included: none
  // of it may notify anyone or link (or close) an issue. The message quotes no candidate (render_commit_message);
  // it passes the secret scan all the same, since a pushed commit cannot be taken back.
  const std::string message = redact(request.message, environment_secrets(credential_name));
  p.commit = committer.run({"commit-tree", tree, "-p", p.parent, "-F", "-"}, unlinked(message));
  // The empty old value makes git refuse if the branch appeared meanwhile instead of overwriting it.
  g.run({"update-ref", "refs/heads/" + p.branch, p.commit, ""});
  return p;
}

namespace {

std::string env_or(const char* name, std::string fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::move(fallback);
}

// One try at opening the pull request: a failure worth another try (5xx, 429, a network failure) is `again`; any
// other answer is final and says that the pushed branch can still be opened by hand.
attempt_outcome try_open(http::github_api& github, const commit_proposal& proposal, const pull_request_options& options,
                         pull_request& opened, std::string& last) {
  try {
    const auto pr = github.open_pull_request(options.title, proposal.branch, options.base, options.body);
    opened = {pr.number, pr.html_url};
    return attempt_outcome::success();
  } catch (const error& e) {
    if (e.code() == errc::unavailable) {
      last = e.what();
      return attempt_outcome::again();
    }
    if (e.code() == errc::unauthorized) throw error(e.code(), std::string(e.what()) + " ($GITHUB_TOKEN was rejected)");
    const std::string hand = "; branch " + proposal.branch + " is pushed and can be opened by hand";
    if (e.code() == errc::forbidden || e.code() == errc::not_found) {
      throw error(errc::forbidden, "GitHub refused to open a pull request in " + options.repository + " (" + e.what() +
                                       "); the token needs pull-requests: write on that repository" + hand);
    }
    throw error(e.code(), "GitHub did not open the pull request (" + std::string(e.what()) + ")" + hand);
  }
}

}  // namespace

pull_request open_pull_request(const commit_proposal& proposal, const pull_request_options& options) {
  if (options.token.empty()) {
    throw error(errc::usage,
                "--open-pr needs a token in $GITHUB_TOKEN (in a workflow: env: GITHUB_TOKEN: "
                "${{ secrets.GITHUB_TOKEN }} with permissions contents: write, pull-requests: write)");
  }
  if (options.repository.find('/') == std::string::npos) {
    throw error(errc::usage, "--open-pr needs the repository as owner/name in $GITHUB_REPOSITORY or --repo (got \"" +
                                 options.repository + "\")");
  }
  if (options.base.empty()) {
    throw error(errc::usage, "--open-pr needs a base branch: HEAD is detached; pass --base BRANCH");
  }
  git g{proposal.toplevel, {}};
  process_result push =
      g.try_run({"push", options.remote, "refs/heads/" + proposal.branch + ":refs/heads/" + proposal.branch});
  if (push.exit_code != 0) {
    throw error(errc::unavailable, "git push " + options.remote + " " + proposal.branch + " failed: " +
                                       tail_lines(push.err, 4) + " (check the remote and its credentials)");
  }
  http::github_api github(
      options.api_url.empty() ? env_or("GITHUB_API_URL", "https://api.github.com") : options.api_url,
      options.repository, options.token, std::chrono::milliseconds(static_cast<long long>(options.timeout_s * 1000)),
      "rnx-optimize");
  std::string last;
  pull_request pr;
  // A 5xx, a 429 or a network failure is worth another try, after 0.5 s, then 1 s, 2 s, ...
  const retry_backoff backoff{options.retries + 1, std::chrono::milliseconds(500)};
  if (run_with_retries(backoff, [&](int) { return try_open(github, proposal, options, pr, last); })) return pr;
  throw error(errc::unavailable, "opening the pull request failed " + std::to_string(options.retries + 1) +
                                     " times; last: " + last + "; branch " + proposal.branch +
                                     " is pushed and can be opened by hand");
}

}  // namespace rnx::optimize
