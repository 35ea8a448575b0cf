// Running git in the user's repository through the shell, its output read back.
#include "git_command.hpp"

#include <cstdio>
#include <memory>

namespace rnx::gate {

std::optional<std::string> git(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  if (dir.string().find('\'') != std::string::npos) return std::nullopt;
  std::string cmd = "git -C '" + dir.string() + "'";
  for (const auto& a : args) {
    if (a.find('\'') != std::string::npos) return std::nullopt;
    cmd += " '" + a + "'";
  }
  cmd += " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  if (!pipe) return std::nullopt;
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  int status = ::pclose(pipe.release());
  if (status != 0) return std::nullopt;
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

bool is_commit(const std::filesystem::path& dir, const std::string& ref) {
  if (ref.empty() || ref.front() == '-') return false;
  return git(dir, {"rev-parse", "--verify", "--quiet", ref + "^{commit}"}).has_value();
}

}  // namespace rnx::gate
