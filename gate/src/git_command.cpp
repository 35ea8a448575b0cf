// Running git in the user's repository (argv, no shell), its output read back.
#include "git_command.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <unistd.h>

namespace rnx::gate {

std::optional<std::string> git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"git", "-C", dir.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::string out;
  if (run_capture(argv, out, capture::stdout_only) != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

bool is_commit(const std::filesystem::path& dir, const std::string& ref) {
  if (ref.empty() || ref.front() == '-') return false;
  return git(dir, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"}).has_value();
}

scoped_worktree::scoped_worktree(const std::filesystem::path& repo, const std::string& ref, const std::string& option)
    : repo_(repo) {
  // argv, no shell: a ref is passed to git as it is, whatever characters it holds; one that starts with '-'
  // would be read as an option.
  if (ref.empty() || ref.front() == '-') {
    throw error(errc::usage, option + " " + ref + ": not a revision (name a commit, branch or tag)");
  }
  char pattern[] = "/tmp/rnx-pair-XXXXXX";
  if (!::mkdtemp(pattern)) throw error(errc::internal, "cannot create a temporary folder for " + option);
  path_ = pattern;
  std::filesystem::remove(path_);
  std::string out;
  const int status = run_capture({"git", "-C", repo.string(), "worktree", "add", "--detach", path_.string(), ref}, out);
  if (status != 0) {
    throw error(errc::usage, option + " " + ref + ": git worktree add failed (is " + ref +
                                 " a commit, branch or tag of this repository? fetch it first): " + out);
  }
  created_ = true;
}

scoped_worktree::~scoped_worktree() {
  if (created_) (void)git(repo_, {"worktree", "remove", "--force", path_.string()});
}

}  // namespace rnx::gate
