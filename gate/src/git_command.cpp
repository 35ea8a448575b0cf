// Running git in the user's repository (argv, no shell), its output read back.
#include "git_command.hpp"

#include "rnx/common/process.hpp"

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

}  // namespace rnx::gate
