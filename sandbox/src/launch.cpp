// The sandboxed launch (parent and forked child): session, descriptors, namespaces, the mount namespace's layers,
// leaving root, Landlock's write rules, rlimits, then the worker; and the resident memory of what it started.
#include "rnx/sandbox/sandbox.hpp"

#include "child_plan.hpp"
#include "detail.hpp"
#include "rnx/common/error.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

namespace rnx::sandbox {

namespace fs = std::filesystem;

namespace detail {
namespace {

// Written by the child between fork and exec: only async-signal-safe calls (open, write, close).
bool write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ssize_t want = static_cast<ssize_t>(std::strlen(text));
  bool ok = ::write(fd, text, static_cast<std::size_t>(want)) == want;
  ::close(fd);
  return ok;
}

void write_all(int fd, const char* text) {
  std::size_t left = std::strlen(text);
  while (left > 0) {
    ssize_t n = ::write(fd, text, left);
    if (n <= 0) return;
    text += n;
    left -= static_cast<std::size_t>(n);
  }
}

void set_limit(int resource, rlim_t value) {
  struct rlimit r {
    value, value
  };
  ::setrlimit(resource, &r);
}

// The functions below run in the child: async-signal-safe calls only.

void write_landlock_line(child_plan& plan, int fd, int landlock) {
  if (landlock > 0 && landlock < 10) {
    plan.fs_ok_line[plan.abi_digit_1] = plan.fs_ok_line[plan.abi_digit_2] = static_cast<char>('0' + landlock);
    write_all(fd, plan.fs_ok_line.c_str());
  } else {
    write_all(fd, plan.fs_none_line.c_str());
  }
}

void report_layer(int fd, const layer_lines& lines, bool ok) { write_all(fd, (ok ? lines.ok : lines.missing).c_str()); }

// The resource limits, the scratch folder as working directory, then the worker itself.
[[noreturn]] void exec_worker(const child_plan& plan) {
  set_limit(RLIMIT_CPU, plan.cpu);
  set_limit(RLIMIT_FSIZE, plan.file);
  set_limit(RLIMIT_NPROC, plan.nproc);
  set_limit(RLIMIT_CORE, 0);
  if (plan.limit_address_space) set_limit(RLIMIT_AS, plan.memory);
  if (::chdir(plan.dir.c_str()) != 0) ::_exit(126);
  ::execve(plan.c_args[0], plan.c_args.data(), plan.c_env.data());
  const char* msg = "{\"event\":\"fatal\",\"code\":\"internal\",\"message\":\"cannot start the sandboxed worker\"}\n";
  write_all(result_fd_in_worker, msg);
  ::_exit(127);
}

// The pipe becomes fd 3 and every other inherited descriptor is closed: a candidate must not find the caller's
// sockets (an optimizer's connection to its model provider) or files. stdin, stdout and stderr go to /dev/null: an
// inherited socket or terminal there is a way out, and the candidate's prints must not mix into the caller's output
// (a JSON report, say). True when stdin, stdout and stderr are on /dev/null.
bool isolate_descriptors(int pipe_write_end) {
  int out = ::fcntl(pipe_write_end, F_DUPFD, 10);
  if (out < 0 || ::dup2(out, result_fd_in_worker) < 0) ::_exit(126);
  if (::syscall(SYS_close_range, result_fd_in_worker + 1, ~0U, 0) != 0) {
    for (int fd = result_fd_in_worker + 1; fd < 4096; ++fd) ::close(fd);
  }
  const int null = ::open("/dev/null", O_RDWR);
  const bool quiet = null >= 0 && ::dup2(null, 0) == 0 && ::dup2(null, 1) == 1 && ::dup2(null, 2) == 2;
  if (null > 2) ::close(null);
  return quiet;
}

struct namespaces_entered {
  const char* line = nullptr;  // the "sandbox" event: how the network is cut
  bool own_pids = false;       // a process namespace of its own (this process forks its PID 1)
  bool as_root = false;        // namespaces made as host root: leave_root comes after the mounts
  bool unprivileged = false;   // no longer host root
};

// Network, mount and process namespaces where the kernel allows them: root makes them without a user namespace (a
// user namespace would map the candidate's uid 0 to host root) and leaves root below; anyone else inside a user
// namespace that maps only their own uid. The mount namespace is what lets the worker see only its own /proc, a
// reduced /dev and a scratch tmpfs.
namespaces_entered enter_namespaces(const child_plan& plan) {
  constexpr int all_but_user = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID;
  namespaces_entered got;
  got.line = plan.none_line.c_str();
  got.unprivileged = !plan.root;
  if (plan.root && ::unshare(all_but_user) == 0) {
    got.line = plan.root_line.c_str();
    got.own_pids = got.as_root = true;
    return got;
  }
  if (plan.root) {
    hand_over_scratch(plan.dir.c_str(), plan.uid, plan.gid);
    // No mount namespace as root: /root cannot be covered and the worker's install shown back, so the worker keeps
    // reading what root could (the host_files layer is reported missing; the weaker sandbox must be allowed).
    got.unprivileged = leave_root(plan.uid, plan.gid, !plan.reveal.covers.empty());
  }
  if (got.unprivileged &&
      (::unshare(CLONE_NEWUSER | all_but_user) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0)) {
    write_file("/proc/self/setgroups", "deny\n");
    write_file("/proc/self/uid_map", plan.uid_map.c_str());
    write_file("/proc/self/gid_map", plan.gid_map.c_str());
    got.line = plan.cpu_line.c_str();
    // A fresh process namespace has no process yet: its link cannot be read until the first child exists.
    char link[64] = {};
    got.own_pids = ::readlink("/proc/self/ns/pid_for_children", link, sizeof link) < 0 && errno == ENOENT;
  }
  return got;
}

// This process stays outside the namespace and ends as its PID 1 does: a worker that died of a signal is reported
// so (PID 1 passes it on as 128 + the signal, since it cannot die of one itself).
[[noreturn]] void outlive_namespace_init(pid_t init, int fd) {
  ::close(fd);
  int status = 0;
  while (::waitpid(init, &status, 0) < 0 && errno == EINTR) {
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 125;
  if (code > 128 && code < 128 + 65) {
    ::signal(code - 128, SIG_DFL);
    ::kill(::getpid(), code - 128);
  }
  ::_exit(code);
}

// PID 1 of the namespace is a copy of the caller: its command line (rnx's arguments) is blanked in its memory, which
// is what /proc/1/cmdline shows the worker.
void blank_command_line(const child_plan& plan) {
  if (plan.command_line) std::memset(plan.command_line, 0, plan.command_line_size);
}

// PID 1 of the new namespace: its own /proc, /dev and scratch, then the worker as PID 2, reaped here.
[[noreturn]] void namespace_init(child_plan& plan, int fd, namespaces_entered got) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const bool proc = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
  write_all(fd, proc ? plan.proc_ok_line.c_str() : plan.proc_none_line.c_str());
  report_layer(fd, plan.proc_sys_lines, proc && proc_sys_read_only());
  report_layer(fd, plan.dev_lines, reduce_dev(plan.shm_options.c_str()));
  // Before the scratch tmpfs: scratch may be one of the paths shown again under a cover.
  report_layer(fd, plan.host_files_lines,
               plan.reveal.covers.empty() || (got.as_root && reveal_host_paths(plan.reveal)));
  // The job's files, as the caller copied them onto the disk, taken before the scratch tmpfs covers them.
  const int handed = plan.handed ? take_handed(plan.handed_dir.c_str()) : -1;
  report_layer(
      fd, plan.scratch_lines,
      scratch_on_tmpfs(plan.dir.c_str(), plan.scratch_options.c_str(), got.as_root ? plan.uid : static_cast<uid_t>(-1),
                       got.as_root ? plan.gid : static_cast<gid_t>(-1)) &&
          compiled_on_tmpfs(plan.compiled_dir.c_str(), plan.compiled_options.c_str()) &&
          (!plan.handed || show_handed(handed, plan.handed_dir.c_str())));
  if (got.as_root) got.unprivileged = leave_root(plan.uid, plan.gid);
  report_layer(fd, plan.user_lines, got.unprivileged);
  report_layer(fd, plan.tasks_lines, got.unprivileged);
  if (!got.unprivileged) ::_exit(126);  // never run untrusted code as host root
  write_landlock_line(plan, fd, restrict_files(plan.rules));
  blank_command_line(plan);
  const pid_t worker = ::fork();
  if (worker < 0) ::_exit(126);
  if (worker == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    exec_worker(plan);
  }
  ::close(fd);
  int status = 0;
  while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
  }
  ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125);
}

// No process namespace: the layers that need one are reported missing, and the worker runs in this process.
[[noreturn]] void exec_without_pid_namespace(child_plan& plan, int fd, bool unprivileged) {
  write_all(fd, plan.proc_none_line.c_str());
  report_layer(fd, plan.proc_sys_lines, false);
  report_layer(fd, plan.dev_lines, false);
  report_layer(fd, plan.scratch_lines, false);
  report_layer(fd, plan.user_lines, unprivileged);
  report_layer(fd, plan.host_files_lines, plan.reveal.covers.empty());
  report_layer(fd, plan.tasks_lines, unprivileged);
  if (!unprivileged) ::_exit(126);
  write_landlock_line(plan, fd, restrict_files(plan.rules));
  exec_worker(plan);
}

// The forked child: its own session, descriptors, namespaces; each layer reported on the result pipe as it is set.
[[noreturn]] void sandboxed_child(child_plan& plan, int pipe_write_end, const char* cgroup_procs) {
  // Into the tree's memory cgroup before anything else, while this child still has the caller's rights there:
  // everything it starts from now on is charged to it.
  join_cgroup(cgroup_procs);
  // A session and process group of its own, without the caller's controlling terminal: nothing in it can type
  // into the user's shell (TIOCSTI) or be stopped by the terminal.
  const bool own_session = ::setsid() >= 0;
  // The folders and files this child makes for the worker (the skeleton under a cover, /dev's nodes) are opened to
  // it by their modes, whatever umask the caller runs with (077 would close them to the worker's uid).
  ::umask(022);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker never outlives the verifier
  ::prctl(PR_SET_DUMPABLE, 1);         // the parent is not; this child must still own its /proc/self/uid_map
  const bool quiet = isolate_descriptors(pipe_write_end);
  const int fd = result_fd_in_worker;
  const namespaces_entered got = enter_namespaces(plan);
  write_all(fd, got.line);
  report_layer(fd, plan.session_lines, own_session && quiet);
  if (!got.own_pids) exec_without_pid_namespace(plan, fd, got.unprivileged);
  // Nothing outside may see this process's memory or environment (it is a copy of the verifier's).
  ::prctl(PR_SET_DUMPABLE, 0);
  const pid_t init = ::fork();
  if (init < 0) ::_exit(126);
  if (init > 0) outlive_namespace_init(init, fd);
  namespace_init(plan, fd, got);
}

}  // namespace
}  // namespace detail

sandboxed_process spawn_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::filesystem::path& workdir, const sandbox_limits& limits,
                                  bool limit_address_space) {
  detail::child_plan plan(argv, env, workdir, limits, limit_address_space);
  auto cgroup = std::make_unique<tree_cgroup>();
  if (!cgroup->available()) cgroup.reset();
  const std::string procs = cgroup ? cgroup->procs_path() : std::string();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    const int why = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw error(errc::internal, std::string("fork failed: ") + std::strerror(why));
  }
  if (pid == 0) detail::sandboxed_child(plan, fds[1], procs.c_str());
  ::close(fds[1]);
  return {pid, fds[0], std::move(cgroup)};
}

namespace {

// The children of every thread of `pid`: /proc/P/task/T/children lists only those thread T started, and a
// child started from a pool thread (a compiler's workers) is no child of the main thread.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> found;
  std::error_code ec;
  for (fs::directory_iterator task("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && task != end;
       task.increment(ec)) {
    std::ifstream children(task->path() / "children");
    for (pid_t child; children >> child;) found.push_back(child);
  }
  return found;
}

}  // namespace

std::int64_t resident_mb(pid_t pid) {
  // The worker may be a grandchild (PID 2 of its own process namespace): count the whole tree.
  std::int64_t pages = 0;
  std::vector<pid_t> pending = {pid};
  while (!pending.empty()) {
    const pid_t p = pending.back();
    pending.pop_back();
    std::ifstream statm("/proc/" + std::to_string(p) + "/statm");
    std::int64_t size = 0, resident = 0;
    if (statm >> size >> resident) pages += resident;
    for (pid_t child : children_of(p)) pending.push_back(child);
  }
  return pages * ::sysconf(_SC_PAGESIZE) / (1 << 20);
}

std::int64_t tree_memory_mb(const sandboxed_process& p) {
  const std::int64_t walked = resident_mb(p.pid);
  return p.cgroup ? std::max(walked, p.cgroup->anon_mb()) : walked;
}

void kill_tree(const sandboxed_process& p) {
  ::kill(-p.pid, SIGKILL);
  if (p.cgroup) p.cgroup->kill_all();
}

}  // namespace rnx::sandbox
