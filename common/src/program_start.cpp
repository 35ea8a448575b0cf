// rnx::start_program: a child program started from a plan built whole before fork, the child making only
// async-signal-safe calls until execve.
#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace rnx {

namespace {

// What went wrong in the child before its program ran: written to the parent through a pipe that closes at exec.
enum class start_step : int { descriptors, folder, parent, exec };

struct start_failure {
  start_step step = start_step::exec;
  int number = 0;  // errno
};

// The program as execve needs it: argv[0] as given when it names a path, else the first executable file of that
// name on PATH (execvp's rule, applied before fork because the lookup builds strings).
std::string program_path(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  const std::string folders = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
  int seen = ENOENT;
  for (std::size_t begin = 0; begin <= folders.size();) {
    std::size_t end = folders.find(':', begin);
    if (end == std::string::npos) end = folders.size();
    std::string candidate = end == begin ? std::string(".") : folders.substr(begin, end - begin);
    candidate += '/';
    candidate += name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) {
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
      seen = EACCES;
    }
    begin = end + 1;
  }
  throw error(errc::not_found, "cannot start '" + name + "': " + std::strerror(seen) +
                                   " (check the path and that the file is executable)");
}

std::vector<std::string> merged_environment(const std::map<std::string, std::string>& set,
                                            const std::vector<std::string>& unset) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string kv(*e);
    std::string key = kv.substr(0, kv.find('='));
    if (set.count(key) || std::find(unset.begin(), unset.end(), key) != unset.end()) continue;
    env.push_back(std::move(kv));
  }
  for (const auto& [k, v] : set) {
    std::string kv = k;
    kv += '=';
    kv += v;
    env.push_back(std::move(kv));
  }
  return env;
}

// Everything the child reads, built in the parent: the child formats nothing and allocates nothing.
struct child_steps {
  std::string path;
  std::vector<std::string> args;
  std::vector<char*> c_args;
  std::vector<std::string> env;
  std::vector<char*> c_env;
  char** envp = nullptr;
  std::string folder;
  std::vector<int> sources;  // our descriptors, in the order of targets
  std::vector<int> targets;  // the child's numbers for them
  std::vector<int> moved;    // the child's copies of sources above every target (written in the child's memory)
  int lowest_free = 3;       // one above the highest target: descriptors from here on are moved or closed
  bool close_others = false;
  int descriptor_limit = 4096;  // the loop's end where close_range is missing
  bool own_group = false;
  bool die_with_parent = false;
  pid_t parent = 0;  // the starter, as the child must still find it once its death signal is armed
  bool bind = false;
  cpu_set_t cores;
  int null_fd = -1;    // /dev/null, opened here when a stream goes there
  int report_fd = -1;  // the pipe's write end that carries a start_failure

  child_steps(const program_start& start, int report) : report_fd(report) {
    path = program_path(start.argv.front());
    args = start.argv;
    for (auto& a : args) c_args.push_back(a.data());
    c_args.push_back(nullptr);
    if (start.env_set.empty() && start.env_unset.empty()) {
      envp = environ;
    } else {
      env = merged_environment(start.env_set, start.env_unset);
      for (auto& e : env) c_env.push_back(e.data());
      c_env.push_back(nullptr);
      envp = c_env.data();
    }
    folder = start.cwd.string();
    plan_descriptors(start);
    own_group = start.own_group;
    die_with_parent = start.die_with_parent;
    parent = ::getpid();
    CPU_ZERO(&cores);
    for (int c : start.cores) CPU_SET(c, &cores);
    bind = !start.cores.empty();
  }
  child_steps(const child_steps&) = delete;
  child_steps& operator=(const child_steps&) = delete;
  ~child_steps() {
    if (null_fd >= 0) ::close(null_fd);
  }

  void plan_descriptors(const program_start& start) {
    for (const auto& [here, there] : start.descriptors) {
      sources.push_back(here);
      targets.push_back(there);
    }
    if (!start.to_null.empty()) {
      null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0) throw error(errc::internal, std::string("cannot open /dev/null: ") + std::strerror(errno));
      for (int there : start.to_null) {
        sources.push_back(null_fd);
        targets.push_back(there);
      }
    }
    moved.assign(sources.size(), -1);
    for (int t : targets) lowest_free = std::max(lowest_free, t + 1);
    close_others = start.close_others;
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
      descriptor_limit = static_cast<int>(std::min<rlim_t>(files.rlim_cur, 1 << 20));
    }
  }
};

[[noreturn]] void fail(int report_fd, start_step step) {
  const start_failure failure{step, errno};
  (void)!::write(report_fd, &failure, sizeof failure);
  ::_exit(127);
}

bool is_target(const child_steps& s, int fd) {
  return std::find(s.targets.begin(), s.targets.end(), fd) != s.targets.end();
}

// Every source and the report pipe first moves above the targets, so that no dup2 overwrites a descriptor a later
// one reads; the copies close at exec. With close_others every descriptor that is not a target closes at exec.
void place_descriptors(child_steps& s) {
  s.report_fd = ::fcntl(s.report_fd, F_DUPFD_CLOEXEC, s.lowest_free);
  if (s.report_fd < 0) ::_exit(127);
  for (std::size_t i = 0; i < s.sources.size(); ++i) {
    s.moved[i] = ::fcntl(s.sources[i], F_DUPFD_CLOEXEC, s.lowest_free);
    if (s.moved[i] < 0) fail(s.report_fd, start_step::descriptors);
  }
  for (std::size_t i = 0; i < s.sources.size(); ++i) {
    if (::dup2(s.moved[i], s.targets[i]) < 0) fail(s.report_fd, start_step::descriptors);
  }
  if (!s.close_others) return;
  for (int fd = 3; fd < s.lowest_free; ++fd) {
    if (!is_target(s, fd)) ::close(fd);
  }
  if (::syscall(SYS_close_range, s.lowest_free, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (int fd = s.lowest_free; fd < s.descriptor_limit; ++fd) (void)::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
}

// The child between fork and exec: async-signal-safe calls only (another thread may have held a lock at the fork).
[[noreturn]] void follow(child_steps& s) {
  if (s.own_group) ::setpgid(0, 0);
  if (s.die_with_parent) {
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail(s.report_fd, start_step::parent);
    if (::getppid() != s.parent) ::_exit(127);  // it died before the signal was armed: nobody reads a report
  }
  // Not fatal: a program that must run on its cores checks them itself.
  if (s.bind) (void)::sched_setaffinity(0, sizeof s.cores, &s.cores);
  place_descriptors(s);
  if (!s.folder.empty() && ::chdir(s.folder.c_str()) != 0) fail(s.report_fd, start_step::folder);
  ::execve(s.path.c_str(), s.c_args.data(), s.envp);
  fail(s.report_fd, start_step::exec);
}

// Reads the child's report: nothing when its program runs (the pipe closed at exec), else what failed.
std::optional<start_failure> read_report(int fd) {
  start_failure failure;
  ssize_t got;
  while ((got = ::read(fd, &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  if (got != static_cast<ssize_t>(sizeof failure)) return std::nullopt;
  return failure;
}

std::string failure_text(const program_start& start, const start_failure& failure) {
  const std::string head = "cannot start '" + start.argv.front() + "'";
  const std::string why = std::strerror(failure.number);
  switch (failure.step) {
    case start_step::descriptors: return head + ": its descriptors could not be set up: " + why;
    case start_step::parent: return head + ": its parent-death signal could not be set: " + why;
    case start_step::folder:
      return head + " in '" + start.cwd.string() + "': " + why + " (check that the folder exists)";
    case start_step::exec: break;
  }
  return head + ": " + why + " (check the path and that the file is executable)";
}

}  // namespace

pid_t start_program(const program_start& start) {
  if (start.argv.empty()) throw error(errc::internal, "start_program: empty argv");
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw error(errc::internal, std::string("pipe: ") + std::strerror(errno));
  std::optional<child_steps> steps;
  try {
    steps.emplace(start, report[1]);
  } catch (...) {
    ::close(report[0]);
    ::close(report[1]);
    throw;
  }
  const pid_t pid = ::fork();
  if (pid == 0) follow(*steps);
  const int fork_error = errno;
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    throw error(errc::internal, std::string("fork: ") + std::strerror(fork_error));
  }
  if (start.own_group) ::setpgid(pid, pid);  // also here: the caller may signal the group as soon as this returns
  const std::optional<start_failure> failure = read_report(report[0]);
  ::close(report[0]);
  if (!failure) return pid;
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  const errc code = failure->step == start_step::descriptors || failure->step == start_step::parent ? errc::internal
                                                                                                    : errc::not_found;
  throw error(code, failure_text(start, *failure));
}

}  // namespace rnx
