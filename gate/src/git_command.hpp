// Running git in the user's repository (the gate and `rnx bench --pair` ask it about revisions).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

// Runs git with arguments in `dir`; returns trimmed stdout, or nullopt when git fails (or an argument holds a
// single quote, which the shell command could not carry).
std::optional<std::string> git(const std::filesystem::path& dir, const std::vector<std::string>& args);

// Whether `ref` names a commit of the repository around `dir`.
bool is_commit(const std::filesystem::path& dir, const std::string& ref);

// A temporary detached checkout of `ref` (git worktree add under /tmp), removed again however its owner ends.
// `option` names what asked for it in messages ("--pair", "rnx bisect"). A ref that is empty, starts with '-' or
// is not a commit of `repo` is errc::usage.
class scoped_worktree {
 public:
  scoped_worktree(const std::filesystem::path& repo, const std::string& ref, const std::string& option);
  ~scoped_worktree();
  scoped_worktree(const scoped_worktree&) = delete;
  scoped_worktree& operator=(const scoped_worktree&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path repo_;
  std::filesystem::path path_;
  bool created_ = false;
};

}  // namespace rnx::gate
