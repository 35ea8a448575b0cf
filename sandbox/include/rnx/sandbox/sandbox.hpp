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

#include <boost/json/object.hpp>

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::sandbox {

// Limits of the sandbox the worker (and so the untrusted code) runs in.
struct sandbox_limits {
  double wall_s = 300;                // whole verification; the worker is killed after it
  double cpu_s = 600;                 // RLIMIT_CPU of the worker
  std::int64_t memory_mb = 12288;     // resident memory (watched) and address space (CPU devices)
  std::int64_t file_mb = 256;         // RLIMIT_FSIZE
  int processes = 512;                // RLIMIT_NPROC of the worker's uid (threads count); never root, so it holds
  std::int64_t scratch_mb = 1024;     // size of the scratch tmpfs (its cwd, HOME, TMPDIR), mounted noexec
  std::int64_t compiled_mb = 256;     // size of its compiled-code folder (compiled_folder), a tmpfs of its own
  std::int64_t shm_mb = 256;          // size of its private /dev/shm
  std::vector<std::string> keep_env;  // extra variable names passed through to the worker
  // Reads confined (Landlock) to the system's folders (/usr, /bin, /sbin, /lib*, /opt, /etc, /sys, /proc, /dev),
  // scratch, program_folders() of the worker, and `readable` (the job's files and folders). Off, the worker reads
  // what its uid may, never more (it holds no capability).
  bool confine_reads = false;
  std::vector<std::filesystem::path> readable;
  // The sandbox stage fails closed: it passes only when the network namespace and the seccomp filter were both
  // applied. This (--allow-weaker-sandbox) lets it pass without them, and every report then says so.
  bool allow_weaker = false;
};

// The worker's environment: an allow-list of what kernels need (PATH, CUDA_*, thread counts, ...); everything
// else, secrets included, is withheld. `withheld` receives the names left out.
std::vector<std::string> sandbox_environment(const sandbox_limits& limits, const std::filesystem::path& workdir,
                                             std::vector<std::string>* withheld);

// The one folder of a sandbox whose files may be mapped as code (dlopen: Triton's launcher, inductor's CPU library,
// a cpp extension, a compiled kernel), `workdir`/.compiled: in the mount namespace a tmpfs of compiled_mb mounted
// without noexec inside the scratch tmpfs, which is noexec. Nothing in it may be started as a program (execve is
// confined by Landlock to installed folders); only mapping is allowed, so the dynamic loader started on a file
// (`ld.so ./copy`) runs it here and nowhere else the candidate can write. The compilers' caches point here
// (TRITON_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR, TORCH_EXTENSIONS_DIR in sandbox_environment), and so must a caller's
// cache of compiled kernels.
std::filesystem::path compiled_folder(const std::filesystem::path& workdir);

// The uid (and gid) the untrusted code runs as when the caller is root: nobody.
constexpr unsigned unprivileged_uid = 65534;

// ---- files handed to the worker ----
// The worker never reaches the job's files by their host paths (a kernel's folder may lie under a folder nobody may
// enter, root's mode-700 temporary folder or /root, and may hold files that are not the kernel's: a .env, a cloud
// login's gha-creds-*.json). The caller copies what the worker needs into `workdir`/handed with its own rights
// before the sandbox starts; inside the sandbox that folder is a read-only, noexec bind beneath scratch.
std::filesystem::path handed_folder(const std::filesystem::path& workdir);

// The files of a kernel's folder that are the kernel's own, relative to that folder: the kernel itself, and the
// Python, C, C++ and CUDA sources (the helper modules it imports, the headers it includes) beside it and in its
// subfolders up to three levels down; never a hidden file or folder (.env, .git), __pycache__, a link, or, when this
// process is root, a file others may not read (the worker's user could not read it where it lies either). Nearer
// levels first, at most max_handed_files files and max_handed_mb MiB (a level that does not fit is left out).
constexpr std::size_t max_handed_files = 2000;
constexpr std::int64_t max_handed_mb = 64;
std::vector<std::filesystem::path> kernel_sources(const std::filesystem::path& kernel);

// Hands `kernel` and its kernel_sources to the worker: copied into handed_folder(workdir)/`role`, readable by the
// worker's user, not writable by it. Returns the path the worker loads the kernel from. Throws rnx::error(internal)
// when a file cannot be copied.
std::filesystem::path hand_kernel(const std::filesystem::path& workdir, const std::filesystem::path& kernel,
                                  const std::string& role);

// The layers spawn_sandboxed sets up besides the network, Landlock and process namespace (which have lines of
// their own: "sandbox", "sandbox_fs", "sandbox_proc"). Each is reported on the result pipe as
// {"event":"sandbox_layer","layer":NAME,"ok":BOOL,"how":TEXT} before the worker starts.
enum class layer {
  user,        // not host root: nobody (uid 65534) when started as root, the caller's own uid otherwise
  host_files,  // no capability; started as root, a folder nobody may not enter is covered, what it needs shown
  session,     // a new session without a controlling terminal; stdin, stdout, stderr on /dev/null
  proc_sys,    // /proc/sys read-only
  dev,         // /dev reduced to null, zero, full, random, urandom and the GPU's nodes; a private /dev/shm
  scratch,     // the scratch folder a noexec tmpfs of scratch_mb, compiled_folder a tmpfs of compiled_mb in it
  tasks,       // a process limit that holds (RLIMIT_NPROC of a uid that is not root)
};
std::string_view to_string(layer l);
std::optional<layer> parse_layer(std::string_view name);
const std::vector<layer>& all_layers();

// The "event" names of the lines spawn_sandboxed writes on the result pipe before the worker starts: how the
// network is cut ("sandbox"), the process namespace ("sandbox_proc"), Landlock ("sandbox_fs") and each layer
// above ("sandbox_layer"). Read by every program that starts a sandboxed worker.
enum class launch_event { sandbox, sandbox_proc, sandbox_fs, sandbox_layer };
std::string_view to_string(launch_event e);
std::optional<launch_event> launch_event_from_string(std::string_view name);
// The "network" member of the "sandbox" line: a network namespace of its own, or seccomp refusing sockets.
enum class network_cut { own_namespace, seccomp };
std::string_view to_string(network_cut c);  // "namespace", "seccomp"
std::optional<network_cut> network_cut_from_string(std::string_view name);

// What the sandbox said about its layers: feed it every event read from the result pipe.
class layer_report {
 public:
  bool read(const boost::json::object& event);  // true when `event` was a sandbox_layer line
  std::vector<std::string> missing() const;     // every layer not applied or never reported, with why
  std::string describe() const;                 // what each applied layer does, "; "-separated

 private:
  std::map<layer, std::pair<bool, std::string>> seen_;
};

// A fresh folder under the system's temporary directory, removed with everything in it when this ends, even
// where the untrusted code made a folder it cannot enter (mode 000): modes are restored before removal.
class scratch_folder {
 public:
  explicit scratch_folder(const std::string& prefix);
  ~scratch_folder();
  scratch_folder(const scratch_folder&) = delete;
  scratch_folder& operator=(const scratch_folder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};
// Removes `path` and everything beneath it, making each folder writable and searchable first.
void remove_tree(const std::filesystem::path& path);

// A memory cgroup of its own for one sandboxed process tree, where the machine lets this process make one under its
// own cgroup (cgroup v2 with the memory controller, else v1's memory hierarchy): every process the tree starts is
// charged to it, from any thread, even one that left the tree's process group and parent (setsid and a double
// fork), which the /proc walk of resident_mb cannot find. Destroying it kills what is left in it and removes it.
class tree_cgroup {
 public:
  tree_cgroup();  // makes it; available() is false, and nothing was made, where the machine offers none
  ~tree_cgroup();
  tree_cgroup(const tree_cgroup&) = delete;
  tree_cgroup& operator=(const tree_cgroup&) = delete;

  bool available() const { return !dir_.empty(); }
  // The file a forked child writes its own pid to (join_cgroup), first thing; empty when not available.
  const std::string& procs_path() const { return procs_; }
  // Anonymous memory charged to it, MiB (memory.stat: v2's anon, v1's total_rss); page cache and tmpfs are not
  // counted (the scratch has a size limit of its own). 0 when not available.
  std::int64_t anon_mb() const;
  std::vector<pid_t> processes() const;
  void kill_all() const;  // SIGKILL to every process in it

 private:
  std::filesystem::path dir_;
  std::string procs_;
  bool v2_ = false;
};

// In a forked child, before anything else: moves the calling process into the cgroup whose procs file is
// `procs_path` (async-signal-safe). False where it could not; the tree is then counted by the /proc walk alone.
bool join_cgroup(const char* procs_path);

struct sandboxed_process {
  pid_t pid = -1;
  int read_fd = -1;  // the worker's result pipe (JSON lines); the child writes its sandbox line first
  // The tree's memory cgroup (its leader joined it before anything else), or null where the machine has none.
  std::unique_ptr<tree_cgroup> cgroup;
};

// The memory the sandboxed tree uses, MiB: the larger of its resident memory by the /proc walk (resident_mb) and
// the anonymous memory charged to its cgroup, which also counts processes that left the tree.
std::int64_t tree_memory_mb(const sandboxed_process& p);

// SIGKILL to the tree's process group and to every process in its cgroup (those that left the group by setsid).
void kill_tree(const sandboxed_process& p);

// Forks and execs argv in its own session, network, mount and process namespace (inside a user namespace
// unless the caller is root), never as host root, with rlimits, `workdir` as cwd/HOME/TMPDIR and `env` as
// environment. `workdir` becomes a tmpfs of limits.scratch_mb in the mount namespace: the regular files the
// caller put at its top level are copied in, and nothing written there is seen outside or survives the worker
// (results travel on the pipe). It is mounted noexec, and so are /dev and /dev/shm: compiled_folder(workdir) is
// the one place the worker can write whose files may be mapped as code. The first lines on the pipe say which layers
// were applied (see layer_report). The worker gets the pipe's write end as --result-fd. Throws rnx::error(internal)
// when fork or pipe fail.
sandboxed_process spawn_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::filesystem::path& workdir, const sandbox_limits& limits,
                                  bool limit_address_space);

// The folders a worker program reads and runs from: its own, its libraries' (the ELF's RUNPATH, $ORIGIN expanded)
// and a Python install above them (a lib folder holding python3.*: its prefix, bin/ included), and the Python
// environment `env` names (PYTHONHOME, VIRTUAL_ENV, CONDA_PREFIX, PYTHONPATH, LD_LIBRARY_PATH). Canonical, existing,
// none beneath another. Started as root, spawn_sandboxed shows these to the worker where they lie under a folder
// nobody may enter (/root); with confine_reads they and the system's folders are all it may read and run.
std::vector<std::filesystem::path> program_folders(const std::filesystem::path& program,
                                                   const std::vector<std::string>& env);

// Resident memory of a process in MiB (0 when it is gone).
std::int64_t resident_mb(pid_t pid);

// ---- inside the worker ----

struct blocked_counts {
  int sockets = 0;      // socket() with a non-local family
  int processes = 0;    // processes the untrusted code left running (counted by the caller; see install_filter)
  int io_uring = 0;     // io_uring_setup (it could open sockets behind seccomp's back)
  int foreign_abi = 0;  // system calls through the x32 or i386 ABI, or numbers past the native table
  int other = 0;        // ptrace and process_vm_*, pidfd_getfd, open_by_handle_at, memfd_create, TIOCSTI
  std::string calls;    // every refused call by name and count, "socket x2, ioctl(TIOCSTI) x1"
};

// The seccomp filter, installed before the untrusted code is imported (phase 1): network sockets (every family
// but netlink), io_uring, another process's memory (ptrace, process_vm_*, pidfd_getfd), open_by_handle_at,
// memfd_create (a file on no mount: Landlock's execute rule does not cover it, so a program written there could be
// started), TIOCSTI/TIOCLINUX, and every call through a foreign ABI (x32, i386) or with a number past the native table
// are refused (EPERM, ENOSYS for the foreign ones) through a SIGSYS handler that records each (blocked()), however the
// call was made; replacing that handler is refused with a plain EPERM (not recorded: Python's vfork child tries it with
// every signal blocked, where a trap would kill it). Phase 2 (before the first call) adds nothing: process creation
// stays allowed, for compilers a kernel starts at its first call (Triton); see restrict_execute. Returns false with
// `why` where seccomp is unavailable (non-x86-64/aarch64, or the kernel refuses).
bool install_filter(int phase, std::string& why);

// Landlock: from now on this process and its children may execute (execve) only files beneath `beneath`
// (missing folders are skipped). Nothing the candidate can write (its scratch, /dev, /proc) belongs there, so it
// cannot run what it wrote. Files may still be moved between folders beneath `scratch` (a ruleset denies that
// everywhere else; caches write a temporary file and rename it into place). Returns false with `why` where Landlock
// is unavailable.
bool restrict_execute(const std::vector<std::filesystem::path>& beneath, const std::filesystem::path& scratch,
                      std::string& why);
// /usr, /bin, /sbin, /lib, /lib64, /lib32, /opt: where system compilers and their loaders live.
const std::vector<std::filesystem::path>& system_program_folders();

// Drops every capability this process holds, for good: the bounding and ambient sets too, so that no later
// execve gives any back (with CAP_SYS_PTRACE a worker could open the judge's /proc/PID/fd and /proc/PID/mem; with
// CAP_DAC_READ_SEARCH read /etc/shadow). Returns false with `why` when a capability is left.
bool drop_capabilities(std::string& why);
blocked_counts blocked();  // what the filter refused in this process so far

}  // namespace rnx::sandbox
