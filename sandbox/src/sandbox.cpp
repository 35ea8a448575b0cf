// Containment: allow-listed environment, namespaces and rlimits for the worker, seccomp filters inside it.
#include "rnx/sandbox/sandbox.hpp"

#include "rnx/common/error.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <fstream>
#include <sstream>

extern char** environ;

namespace rnx::sandbox {

namespace {

bool allowed_variable(const std::string& name, const sandbox_limits& limits) {
  static const char* const exact[] = {"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "LD_LIBRARY_PATH", "PYTHONPATH",
                                      "PYTHONHOME", "VIRTUAL_ENV", "CONDA_PREFIX", "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CC", "CXX", "USER", "LOGNAME"};
  static const char* const prefixes[] = {"LC_", "CUDA_", "NVIDIA_", "CUDNN_", "TORCH_", "TRITON_", "PYENV_",
                                         "RNX_VERIFY_"};
  for (const char* e : exact) {
    if (name == e) return true;
  }
  for (const auto& k : limits.keep_env) {
    if (name == k) return true;
  }
  // A credential never passes, even under an allowed prefix.
  if (looks_secret(name)) return false;
  for (const char* p : prefixes) {
    if (name.rfind(p, 0) == 0) return true;
  }
  return false;
}

}  // namespace

const std::vector<std::string>& secret_words() {
  static const std::vector<std::string> words = {"TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
                                                 "KEY",   "PRIVATE", "AUTH"};
  return words;
}

bool looks_secret(const std::string& name) {
  for (const auto& word : secret_words()) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

std::vector<std::string> sandbox_environment(const sandbox_limits& limits, const std::filesystem::path& workdir,
                                             std::vector<std::string>* withheld) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (name == "HOME" || name == "TMPDIR" || name == "MALLOC_PERTURB_") continue;  // set below
    if (allowed_variable(name, limits)) {
      env.push_back(entry);
    } else if (withheld) {
      withheld->push_back(name);
    }
  }
  env.push_back("HOME=" + workdir.string());
  env.push_back("TMPDIR=" + workdir.string());
  // glibc fills freed heap memory with 0xff bytes (NaN in every float format), so a candidate that returns an
  // uninitialised buffer cannot pick up a result the reference left behind on the CPU.
  env.push_back("MALLOC_PERTURB_=255");
  return env;
}

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

constexpr int result_fd_in_worker = 3;

// Landlock, from the kernel's uapi; defined here where the build machine's headers are older than its kernel.
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
constexpr std::uint64_t fs_write_access = (1ULL << 1) |   // WRITE_FILE
                                          (1ULL << 4) |   // REMOVE_DIR
                                          (1ULL << 5) |   // REMOVE_FILE
                                          (1ULL << 6) |   // MAKE_CHAR
                                          (1ULL << 7) |   // MAKE_DIR
                                          (1ULL << 8) |   // MAKE_REG
                                          (1ULL << 9) |   // MAKE_SOCK
                                          (1ULL << 10) |  // MAKE_FIFO
                                          (1ULL << 11) |  // MAKE_BLOCK
                                          (1ULL << 12);   // MAKE_SYM
constexpr std::uint64_t fs_refer = 1ULL << 13;      // ABI 2
constexpr std::uint64_t fs_truncate = 1ULL << 14;   // ABI 3
constexpr std::uint64_t net_tcp = (1ULL << 0) | (1ULL << 1);  // ABI 4: BIND_TCP, CONNECT_TCP
constexpr std::uint64_t scope_abstract_unix_and_signal = (1ULL << 0) | (1ULL << 1);  // ABI 6

struct landlock_attr {  // landlock_ruleset_attr as of ABI 6; older kernels are passed a prefix of it
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;
  std::uint64_t scoped;
};

struct landlock_beneath {  // landlock_path_beneath_attr (packed in the uapi)
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

// In the child between fork and exec (raw system calls only): from here on nothing may be written outside
// `scratch`, /dev (device nodes are opened for writing; /dev/shm is shared memory) and /proc (the CUDA driver
// fails to start without writes there, seen on the H200: error 304; in the worker's own process namespace its
// /proc shows only the worker and its PID 1), TCP needs no rules to be refused, abstract Unix sockets and signals
// outside this process tree are refused. Returns the ABI version applied, or 0 when the kernel has no Landlock.
int restrict_writes(const char* scratch) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return 0;
  landlock_attr attr{fs_write_access, 0, 0};
  if (abi >= 2) attr.handled_access_fs |= fs_refer;
  if (abi >= 3) attr.handled_access_fs |= fs_truncate;
  std::size_t size = sizeof(std::uint64_t);
  if (abi >= 4) {
    attr.handled_access_net = net_tcp;
    size = 2 * sizeof(std::uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = scope_abstract_unix_and_signal;
    size = sizeof attr;
  }
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, size, 0));
  if (ruleset < 0) return 0;
  bool ok = true;
  for (const char* dir : {scratch, "/dev", "/proc"}) {
    const int fd = ::open(dir, O_PATH | O_CLOEXEC);
    if (fd < 0) {
      ok = false;
      continue;
    }
    landlock_beneath rule{attr.handled_access_fs, fd};
    ok = ok && ::syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &rule, 0) == 0;
    ::close(fd);
  }
  ok = ok && ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  ::close(ruleset);
  return ok ? static_cast<int>(abi) : 0;
}

void set_limit(int resource, rlim_t value) {
  struct rlimit r {value, value};
  ::setrlimit(resource, &r);
}

}  // namespace

sandboxed_process spawn_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::filesystem::path& workdir, const sandbox_limits& limits,
                                  bool limit_address_space) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  // Everything the child needs is built here: after fork only async-signal-safe calls are allowed.
  std::vector<std::string> args = argv;
  args.push_back("--result-fd");
  args.push_back(std::to_string(result_fd_in_worker));
  std::vector<char*> c_args;
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  std::vector<std::string> env_copy = env;
  std::vector<char*> c_env;
  for (auto& e : env_copy) c_env.push_back(e.data());
  c_env.push_back(nullptr);
  const std::string uid_map = std::to_string(::getuid()) + " " + std::to_string(::getuid()) + " 1\n";
  const std::string gid_map = std::to_string(::getgid()) + " " + std::to_string(::getgid()) + " 1\n";
  const std::string dir = workdir.string();
  const std::string cpu_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"user+network namespace\"}\n";
  const std::string root_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"network namespace\"}\n";
  const std::string none_line =
      "{\"event\":\"sandbox\",\"network\":\"seccomp\",\"how\":\"namespaces are not permitted here; network sockets "
      "are refused by the seccomp filter only\"}\n";
  // The child fills in the Landlock ABI (one digit) without formatting: only async-signal-safe calls there.
  std::string fs_ok_line =
      "{\"event\":\"sandbox_fs\",\"landlock\":#,\"how\":\"Landlock ABI #: writes only in its scratch folder, "
      "/dev and its own /proc\"}\n";
  const std::size_t abi_digit_1 = fs_ok_line.find('#');
  const std::size_t abi_digit_2 = fs_ok_line.find('#', abi_digit_1 + 1);
  const std::string fs_none_line =
      "{\"event\":\"sandbox_fs\",\"landlock\":0,\"how\":\"no Landlock here: the candidate may write wherever the "
      "user may\"}\n";
  const std::string proc_ok_line =
      "{\"event\":\"sandbox_proc\",\"own\":true,\"how\":\"its own process namespace and /proc\"}\n";
  const std::string proc_none_line =
      "{\"event\":\"sandbox_proc\",\"own\":false,\"how\":\"no process namespace here: the processes of this user "
      "(and their environments, where readable) are visible\"}\n";
  char link_a[64] = {};
  const rlim_t cpu = static_cast<rlim_t>(limits.cpu_s);
  const rlim_t memory = static_cast<rlim_t>(limits.memory_mb) << 20;
  const rlim_t file = static_cast<rlim_t>(limits.file_mb) << 20;
  const rlim_t nproc = static_cast<rlim_t>(limits.processes);

  // Both run in the child (async-signal-safe calls only).
  auto write_landlock_line = [&](int fd, int landlock) {
    if (landlock > 0 && landlock < 10) {
      fs_ok_line[abi_digit_1] = fs_ok_line[abi_digit_2] = static_cast<char>('0' + landlock);
      write_all(fd, fs_ok_line.c_str());
    } else {
      write_all(fd, fs_none_line.c_str());
    }
  };
  auto exec_worker = [&] {
    set_limit(RLIMIT_CPU, cpu);
    set_limit(RLIMIT_FSIZE, file);
    set_limit(RLIMIT_NPROC, nproc);
    set_limit(RLIMIT_CORE, 0);
    if (limit_address_space) set_limit(RLIMIT_AS, memory);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execve(c_args[0], c_args.data(), c_env.data());
    const char* msg = "{\"event\":\"fatal\",\"code\":\"internal\",\"message\":\"cannot start the verify worker\"}\n";
    write_all(result_fd_in_worker, msg);
    ::_exit(127);
  };

  pid_t pid = ::fork();
  if (pid < 0) throw error(errc::internal, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the worker never outlives the verifier
    ::prctl(PR_SET_DUMPABLE, 1);         // the parent is not; this child must still own its /proc/self/uid_map
    // The pipe becomes fd 3 and every other inherited descriptor is closed: a candidate must not find the
    // caller's sockets (an optimizer's connection to its model provider) or files.
    int out = ::fcntl(fds[1], F_DUPFD, 10);
    if (out < 0 || ::dup2(out, result_fd_in_worker) < 0) ::_exit(126);
    if (::syscall(SYS_close_range, result_fd_in_worker + 1, ~0U, 0) != 0) {
      for (int fd = result_fd_in_worker + 1; fd < 4096; ++fd) ::close(fd);
    }
    ::dup2(2, 1);  // the candidate's prints must not mix into the caller's stdout (a JSON report, say)
    const int fd = result_fd_in_worker;
    const char* line = none_line.c_str();
    // Network, mount and process namespaces where the kernel allows them (inside a user namespace unless this is
    // root): the mount namespace is what lets the worker's /proc show only its own processes.
    constexpr int all_but_user = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID;
    bool own_pids = false;
    if (::unshare(CLONE_NEWUSER | all_but_user) == 0 || ::unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0) {
      write_file("/proc/self/setgroups", "deny\n");
      write_file("/proc/self/uid_map", uid_map.c_str());
      write_file("/proc/self/gid_map", gid_map.c_str());
      line = cpu_line.c_str();
      // A fresh process namespace has no process yet: its link cannot be read until the first child exists.
      own_pids = ::readlink("/proc/self/ns/pid_for_children", link_a, sizeof link_a) < 0 && errno == ENOENT;
    } else if (::unshare(all_but_user) == 0) {
      line = root_line.c_str();
      own_pids = true;
    } else if (::unshare(CLONE_NEWNET) == 0) {
      line = root_line.c_str();
    }
    write_all(fd, line);
    if (own_pids) {
      // Nothing outside may see this process's memory or environment (it is a copy of the verifier's).
      ::prctl(PR_SET_DUMPABLE, 0);
      const pid_t init = ::fork();
      if (init < 0) ::_exit(126);
      if (init > 0) {
        // This process stays outside the namespace and ends as its PID 1 does: a worker that died of a signal
        // is reported so (PID 1 passes it on as 128 + the signal, since it cannot die of one itself).
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
      // PID 1 of the new namespace: its own /proc, then the worker as PID 2, reaped here.
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      const bool proc = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                        ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
      write_all(fd, proc ? proc_ok_line.c_str() : proc_none_line.c_str());
      const int landlock = restrict_writes(dir.c_str());
      write_landlock_line(fd, landlock);
      const pid_t worker = ::fork();
      if (worker < 0) ::_exit(126);
      if (worker == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        exec_worker();
      }
      ::close(fd);
      int status = 0;
      while (::waitpid(worker, &status, 0) < 0 && errno == EINTR) {
      }
      ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 125);
    }
    write_all(fd, proc_none_line.c_str());
    write_landlock_line(fd, restrict_writes(dir.c_str()));
    exec_worker();
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

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
    std::ifstream children("/proc/" + std::to_string(p) + "/task/" + std::to_string(p) + "/children");
    for (pid_t child; children >> child;) pending.push_back(child);
  }
  return pages * ::sysconf(_SC_PAGESIZE) / (1 << 20);
}

// ---- seccomp ----

namespace {

std::atomic<int> blocked_sockets{0};
std::atomic<int> blocked_processes{0};
std::atomic<int> blocked_io_uring{0};

#if defined(__x86_64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_X86_64;
constexpr std::uint32_t x32_syscall_bit = 0x40000000;  // __X32_SYSCALL_BIT of <asm/unistd.h>
#elif defined(__aarch64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_AARCH64;
#endif

// SIGSYS from SECCOMP_RET_TRAP: count what was tried and make the syscall return -EPERM, so the candidate sees
// an ordinary error and the report can say what it attempted.
void on_sigsys(int, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  const int nr = info->si_syscall;
  if (nr == SYS_socket) {
    blocked_sockets.fetch_add(1, std::memory_order_relaxed);
  } else if (nr == SYS_io_uring_setup) {
    blocked_io_uring.fetch_add(1, std::memory_order_relaxed);
  } else {
    blocked_processes.fetch_add(1, std::memory_order_relaxed);
  }
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
#elif defined(__aarch64__)
  uc->uc_mcontext.regs[0] = static_cast<unsigned long long>(-EPERM);
#endif
}

}  // namespace

bool install_filter(int phase, std::string& why) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  (void)phase;
  why = "seccomp filters are built for x86-64 and aarch64 only";
  return false;
#else
  struct sigaction sa {};
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  ::sigemptyset(&sa.sa_mask);
  if (::sigaction(SIGSYS, &sa, nullptr) != 0) {
    why = std::string("sigaction(SIGSYS) failed: ") + std::strerror(errno);
    return false;
  }
  constexpr std::uint32_t trap = SECCOMP_RET_TRAP;
  constexpr std::uint32_t allow = SECCOMP_RET_ALLOW;
  std::vector<sock_filter> f;
  auto stmt = [&](std::uint16_t code, std::uint32_t k) { f.push_back(BPF_STMT(code, k)); };
  auto jump = [&](std::uint16_t code, std::uint32_t k, std::uint8_t jt, std::uint8_t jf) {
    f.push_back(BPF_JUMP(code, k, jt, jf));
  };
  const auto nr_offset = static_cast<std::uint32_t>(offsetof(seccomp_data, nr));
  const auto arg0_offset = static_cast<std::uint32_t>(offsetof(seccomp_data, args));  // low word (little endian)
  stmt(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, arch)));
  jump(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);  // a foreign syscall ABI (i386) is never legitimate here
  stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset);
#if defined(__x86_64__)
  // x32 system calls carry AUDIT_ARCH_X86_64 too, with __X32_SYSCALL_BIT in the number: the checks below compare
  // plain numbers, so an x32 socket() would pass them. Nothing here uses the x32 ABI.
  jump(BPF_JMP | BPF_JGE | BPF_K, x32_syscall_bit, 0, 1);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
#endif
  // socket(domain, ...): netlink stays (interface queries), everything else traps, AF_UNIX included: the
  // reference (and with it CUDA's set-up) ran before this filter, and a Unix socket on disk (the Docker
  // daemon's, say) would give the candidate what the network namespace takes away.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, trap);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_io_uring_setup, 0, 1);
  stmt(BPF_RET | BPF_K, trap);
  // Another process's memory and descriptors (the judge's, above all): already out of reach, since the judge is
  // not dumpable and nothing here has capabilities; refused outright as well.
  for (std::uint32_t nr : {static_cast<std::uint32_t>(SYS_ptrace), static_cast<std::uint32_t>(SYS_process_vm_readv),
                           static_cast<std::uint32_t>(SYS_process_vm_writev), static_cast<std::uint32_t>(SYS_pidfd_getfd)}) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  }
  if (phase >= 2) {
#if defined(__x86_64__)
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 0, 1);
    stmt(BPF_RET | BPF_K, trap);
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 0, 1);
    stmt(BPF_RET | BPF_K, trap);
#endif
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 0, 1);
    stmt(BPF_RET | BPF_K, trap);
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 0, 1);
    stmt(BPF_RET | BPF_K, trap);
    // clone3 hides its flags behind a pointer seccomp cannot read: ENOSYS makes glibc fall back to clone().
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1);
    stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
    // clone(flags, ...): threads (CLONE_THREAD) are fine, new processes trap.
    jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4);
    stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
    jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
    stmt(BPF_RET | BPF_K, allow);
    stmt(BPF_RET | BPF_K, trap);
  }
  stmt(BPF_RET | BPF_K, allow);
  sock_fprog prog{static_cast<unsigned short>(f.size()), f.data()};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    why = std::string("PR_SET_NO_NEW_PRIVS failed: ") + std::strerror(errno);
    return false;
  }
  // TSYNC: every thread of the worker (torch's pools included) gets the filter, not just this one.
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog) != 0) {
    why = std::string("seccomp(SET_MODE_FILTER) failed: ") + std::strerror(errno);
    return false;
  }
  return true;
#endif
}

bool drop_capabilities(std::string& why) {
  // Dropping from the bounding set needs CAP_SETPCAP; without it there is nothing to drop from (a worker that is
  // not root in its namespace lost its capabilities at execve), which the check below confirms.
  for (int cap = 0; cap < 64; ++cap) {
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[2] = {};
  if (::syscall(SYS_capset, &header, none) != 0) {
    why = std::string("capset failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  __user_cap_data_struct now[2] = {};
  if (::syscall(SYS_capget, &header, now) != 0) {
    why = std::string("capget failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  for (const auto& d : now) {
    if (d.effective || d.permitted || d.inheritable) {
      why = "capabilities are left after dropping them; ";
      return false;
    }
  }
  return true;
}

blocked_counts blocked() {
  return {blocked_sockets.load(), blocked_processes.load(), blocked_io_uring.load()};
}

}  // namespace rnx::sandbox
