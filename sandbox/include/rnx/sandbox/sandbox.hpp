// Containment for untrusted code (a candidate kernel in `rnx verify`, its timing in `rnx optimize`): the
// sandboxed launch of a worker (parent side) and the seccomp filters the worker installs on itself before it
// loads and calls the untrusted code. Torch-free.
//
//   rnx::sandbox::sandbox_limits limits;
//   std::vector<std::string> withheld;
//   auto env = rnx::sandbox::sandbox_environment(limits, scratch, &withheld);
//   auto p = rnx::sandbox::spawn_sandboxed({worker, "--job", job}, env, scratch, limits, cpu_only);
//   // read JSON lines from p.read_fd (the sandbox's own lines first), waitpid(p.pid)
//   // ... and inside the worker, before the untrusted code is imported / first called:
//   std::string why;
//   bool sealed = rnx::sandbox::drop_capabilities(why) && rnx::sandbox::install_filter(1, why);
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rnx::sandbox {

// Limits of the sandbox the worker (and so the untrusted code) runs in.
struct sandbox_limits {
  double wall_s = 300;             // whole verification; the worker is killed after it
  double cpu_s = 600;              // RLIMIT_CPU of the worker
  std::int64_t memory_mb = 12288;  // resident memory (watched) and address space (CPU devices)
  std::int64_t file_mb = 256;      // RLIMIT_FSIZE
  int processes = 512;             // RLIMIT_NPROC inside the worker's user namespace (threads count)
  std::vector<std::string> keep_env;  // extra variable names passed through to the worker
  // The sandbox stage fails closed: it passes only when the network namespace and the seccomp filter were both
  // applied. This (--allow-weaker-sandbox) lets it pass without them, and every report then says so.
  bool allow_weaker = false;
};

// Whether an environment variable's name marks a credential (TOKEN, SECRET, KEY, PASSWORD, ...): such a variable
// never reaches the worker, whatever prefix it has, and the report names it among what was withheld.
bool looks_secret(const std::string& name);
const std::vector<std::string>& secret_words();  // the words looks_secret looks for (also the static scan's)

// The worker's environment: an allow-list of what kernels need (PATH, CUDA_*, thread counts, ...); everything
// else, secrets included, is withheld. `withheld` receives the names left out.
std::vector<std::string> sandbox_environment(const sandbox_limits& limits, const std::filesystem::path& workdir,
                                             std::vector<std::string>* withheld);

struct sandboxed_process {
  pid_t pid = -1;
  int read_fd = -1;  // the worker's result pipe (JSON lines); the child writes its sandbox line first
};

// Forks and execs argv in its own process group, user and network namespace (where the kernel allows; the
// first line on the pipe says which), with rlimits, `workdir` as cwd/HOME/TMPDIR and `env` as environment.
// The worker gets the pipe's write end as --result-fd. Throws rnx::error(internal) when fork or pipe fail.
sandboxed_process spawn_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::filesystem::path& workdir, const sandbox_limits& limits,
                                  bool limit_address_space);

// Resident memory of a process in MiB (0 when it is gone).
std::int64_t resident_mb(pid_t pid);

// ---- inside the worker ----

struct blocked_counts {
  int sockets = 0;    // socket() with a non-local family
  int processes = 0;  // fork / vfork / clone without CLONE_THREAD / execve
  int io_uring = 0;   // io_uring_setup (it could open sockets behind seccomp's back)
};

// Phase 1, before the candidate is imported: network sockets and io_uring are refused (EPERM) and counted.
// Phase 2, before the candidate is first called: new processes and execve are refused and counted too
// (import-time builds such as torch.utils.cpp_extension.load_inline still run their compiler in phase 1).
// Returns false with `why` where seccomp is unavailable (non-x86-64/aarch64, or the kernel refuses).
bool install_filter(int phase, std::string& why);

// Drops every capability this process holds, for good: the bounding and ambient sets too, so that no later
// execve gives any back (a worker started as root in its user namespace holds all of them there, and with
// CAP_SYS_PTRACE could open the judge's /proc/PID/fd and /proc/PID/mem). Returns false with `why` when some
// capability is left.
bool drop_capabilities(std::string& why);
blocked_counts blocked();

}  // namespace rnx::sandbox
