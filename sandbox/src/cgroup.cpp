// A memory cgroup of its own for one sandboxed process tree (tree_cgroup in sandbox.hpp): found under this
// process's own cgroup, in cgroup v2 where its memory controller is enabled there, else in v1's memory hierarchy.
#include "rnx/sandbox/sandbox.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <system_error>

namespace rnx::sandbox {

namespace fs = std::filesystem;

namespace {

// The memory controller's folder for this process's own cgroup, and whether it is cgroup v2; nullopt where the
// machine has none this process can see. /proc/self/cgroup lines are ID:CONTROLLERS:PATH; v2's is 0::PATH.
struct memory_hierarchy {
  fs::path own;
  bool v2 = false;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::optional<memory_hierarchy> own_memory_cgroup() {
  std::ifstream in("/proc/self/cgroup");
  std::optional<memory_hierarchy> v1;
  std::optional<memory_hierarchy> v2;
  for (std::string line; std::getline(in, line);) {
    const auto first = line.find(':');
    const auto second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    const fs::path relative = fs::path(path).relative_path();
    if (controllers.empty()) {
      // v2: usable where its root lists the memory controller (mounted at /sys/fs/cgroup, the unified layout).
      std::istringstream listed(read_text("/sys/fs/cgroup/cgroup.controllers"));
      for (std::string name; listed >> name;) {
        if (name == "memory") v2 = memory_hierarchy{fs::path("/sys/fs/cgroup") / relative, true};
      }
      continue;
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');) {
      if (name == "memory") v1 = memory_hierarchy{fs::path("/sys/fs/cgroup/memory") / relative, false};
    }
  }
  if (v2) return v2;
  return v1;
}

std::vector<pid_t> members(const fs::path& dir) {
  std::vector<pid_t> found;
  std::ifstream procs(dir / "cgroup.procs");
  for (pid_t pid; procs >> pid;) found.push_back(pid);
  return found;
}

}  // namespace

tree_cgroup::tree_cgroup() {
  const auto hierarchy = own_memory_cgroup();
  if (!hierarchy) return;
  static std::atomic<unsigned> made{0};
  const fs::path dir = hierarchy->own / ("rnx-sandbox-" + std::to_string(::getpid()) + "-" + std::to_string(made++));
  std::error_code ec;
  if (!fs::create_directory(dir, ec) || ec) return;  // not delegated to this process: the /proc walk alone counts
  // A folder without the memory controller's files is no cgroup to count in (v2 enables a controller for a child
  // only where its parent's subtree_control does).
  if (!fs::exists(dir / "cgroup.procs", ec) || !fs::exists(dir / "memory.stat", ec)) {
    fs::remove(dir, ec);
    return;
  }
  dir_ = dir;
  v2_ = hierarchy->v2;
  procs_ = (dir / "cgroup.procs").string();
}

tree_cgroup::~tree_cgroup() {
  if (dir_.empty()) return;
  // Whatever is left is killed first: a cgroup with a process in it cannot be removed. Killed processes leave it
  // once they have exited, which takes a moment; after ten seconds of tries the folder is left for the system (an
  // empty cgroup holds no memory).
  for (int attempt = 0; attempt < 2000; ++attempt) {
    kill_all();
    std::error_code ec;
    if (fs::remove(dir_, ec) || !fs::exists(dir_, ec)) return;
    ::usleep(5000);
  }
}

std::int64_t tree_cgroup::anon_mb() const {
  if (dir_.empty()) return 0;
  // v2's memory.stat names the anonymous memory `anon`; v1's, with its descendants, `total_rss`. Page cache and
  // tmpfs (the scratch has its own size limit) are not the tree's memory use.
  std::istringstream stat(read_text(dir_ / "memory.stat"));
  const std::string wanted = v2_ ? "anon" : "total_rss";
  std::string key;
  std::int64_t value = 0;
  while (stat >> key >> value) {
    if (key == wanted) return value / (1 << 20);
  }
  return 0;
}

void tree_cgroup::kill_all() const {
  if (dir_.empty()) return;
  for (pid_t pid : members(dir_)) ::kill(pid, SIGKILL);
}

std::vector<pid_t> tree_cgroup::processes() const { return dir_.empty() ? std::vector<pid_t>{} : members(dir_); }

bool join_cgroup(const char* procs_path) {
  if (procs_path == nullptr || procs_path[0] == '\0') return false;
  // Async-signal-safe: the pid formatted by hand, one open, write and close.
  char digits[24];
  char text[24];
  int n = 0;
  for (long pid = ::getpid(); pid > 0 && n < static_cast<int>(sizeof digits); pid /= 10) {
    digits[n++] = static_cast<char>('0' + pid % 10);
  }
  for (int i = 0; i < n; ++i) text[i] = digits[n - 1 - i];
  const int fd = ::open(procs_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, text, static_cast<std::size_t>(n)) == n;
  ::close(fd);
  return ok;
}

}  // namespace rnx::sandbox
