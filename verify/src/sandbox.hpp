// Containment for untrusted candidates: the sandboxed worker launch (parent side) and the seccomp filters the
// worker installs on itself before it loads and calls the candidate.
#pragma once

#include "rnx/verify/verify.hpp"

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::verify::detail {

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

}  // namespace rnx::verify::detail
