// Containment: allow-listed environment, namespaces and rlimits for the worker, seccomp filters inside it.
#include "rnx/sandbox/sandbox.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/landlock.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <grp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <dirent.h>
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
  static const char* const exact[] = {"PATH",
                                      "LANG",
                                      "LANGUAGE",
                                      "TZ",
                                      "TERM",
                                      "LD_LIBRARY_PATH",
                                      "PYTHONPATH",
                                      "PYTHONHOME",
                                      "VIRTUAL_ENV",
                                      "CONDA_PREFIX",
                                      "OMP_NUM_THREADS",
                                      "MKL_NUM_THREADS",
                                      "OPENBLAS_NUM_THREADS",
                                      "CC",
                                      "CXX",
                                      "USER",
                                      "LOGNAME"};
  static const char* const prefixes[] = {"LC_",    "CUDA_",   "NVIDIA_", "CUDNN_",
                                         "TORCH_", "TRITON_", "PYENV_",  "RNX_VERIFY_"};
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
  static const std::vector<std::string> words = {"TOKEN",      "SECRET", "PASSWORD", "PASSWD",
                                                 "CREDENTIAL", "KEY",    "PRIVATE",  "AUTH"};
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
    if (name == "HOME" || name == "TMPDIR" || name == "MALLOC_PERTURB_" || name == "TRITON_HOME" ||
        name == "TRITON_CACHE_DIR" || name == "TRITON_DUMP_DIR" || name == "TRITON_OVERRIDE_DIR") {
      continue;  // set below, or (Triton's other folders) left at their defaults under TRITON_HOME
    }
    if (allowed_variable(name, limits)) {
      env.push_back(entry);
    } else if (withheld) {
      withheld->push_back(name);
    }
  }
  env.push_back("HOME=" + workdir.string());
  env.push_back("TMPDIR=" + workdir.string());
  // Triton compiles at a kernel's first call and caches under $TRITON_HOME/.triton: in scratch, the only place
  // the sandbox may write.
  env.push_back("TRITON_HOME=" + workdir.string());
  env.push_back("TRITON_CACHE_DIR=" + (workdir / ".triton" / "cache").string());
  // glibc fills freed heap memory with 0xff bytes (NaN in every float format), so a candidate that returns an
  // uninitialised buffer cannot pick up a result the reference left behind on the CPU.
  env.push_back("MALLOC_PERTURB_=255");
  return env;
}

std::string_view to_string(layer l) {
  switch (l) {
    case layer::user: return "user";
    case layer::session: return "session";
    case layer::proc_sys: return "proc_sys";
    case layer::dev: return "dev";
    case layer::scratch: return "scratch";
    case layer::tasks: return "tasks";
  }
  return "unknown";
}

std::optional<layer> parse_layer(std::string_view name) {
  for (layer l : all_layers()) {
    if (to_string(l) == name) return l;
  }
  return std::nullopt;
}

std::string_view to_string(launch_event e) {
  switch (e) {
    case launch_event::sandbox: return "sandbox";
    case launch_event::sandbox_proc: return "sandbox_proc";
    case launch_event::sandbox_fs: return "sandbox_fs";
    case launch_event::sandbox_layer: return "sandbox_layer";
  }
  return "sandbox";
}

std::optional<launch_event> launch_event_from_string(std::string_view name) {
  return enum_from_name(
      name, {launch_event::sandbox, launch_event::sandbox_proc, launch_event::sandbox_fs, launch_event::sandbox_layer});
}

std::string_view to_string(network_cut c) { return c == network_cut::seccomp ? "seccomp" : "namespace"; }

std::optional<network_cut> network_cut_from_string(std::string_view name) {
  return enum_from_name(name, {network_cut::own_namespace, network_cut::seccomp});
}

const std::vector<layer>& all_layers() {
  static const std::vector<layer> layers = {layer::user, layer::session, layer::proc_sys,
                                            layer::dev,  layer::scratch, layer::tasks};
  return layers;
}

bool layer_report::read(const boost::json::object& event) {
  const auto* kind = event.if_contains("event");
  if (!kind || !kind->is_string() ||
      launch_event_from_string(std::string_view(kind->as_string())) != launch_event::sandbox_layer) {
    return false;
  }
  const auto* name = event.if_contains("layer");
  const auto* ok = event.if_contains("ok");
  const auto* how = event.if_contains("how");
  if (!name || !name->is_string() || !ok || !ok->is_bool() || !how || !how->is_string()) return true;
  if (auto l = parse_layer(std::string_view(name->as_string()))) {
    seen_[*l] = {ok->as_bool(), std::string(how->as_string())};
  }
  return true;
}

std::vector<std::string> layer_report::missing() const {
  std::vector<std::string> out;
  for (layer l : all_layers()) {
    auto it = seen_.find(l);
    if (it == seen_.end()) {
      out.push_back(std::string(to_string(l)) + ": unknown (the worker said nothing)");
    } else if (!it->second.first) {
      out.push_back(std::string(to_string(l)) + ": " + it->second.second);
    }
  }
  return out;
}

std::string layer_report::describe() const {
  std::string out;
  for (layer l : all_layers()) {
    auto it = seen_.find(l);
    if (it == seen_.end() || !it->second.first) continue;
    out += (out.empty() ? "" : "; ") + it->second.second;
  }
  return out;
}

void remove_tree(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // Folders first made enterable and writable, top-down (a mode-000 folder hides what is inside it).
  std::vector<fs::path> pending = {path};
  while (!pending.empty()) {
    const fs::path p = pending.back();
    pending.pop_back();
    if (!fs::is_directory(fs::symlink_status(p, ec))) continue;
    fs::permissions(p, fs::perms::owner_all, fs::perm_options::add, ec);
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) pending.push_back(it->path());
    ec.clear();
  }
  fs::remove_all(path, ec);
}

scratch_folder::scratch_folder(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    throw error(errc::internal, "cannot create a temporary folder: " + std::string(std::strerror(errno)));
  }
  path_ = pattern;
}

scratch_folder::~scratch_folder() { remove_tree(path_); }

namespace {

struct layer_lines {
  std::string ok;
  std::string missing;
};

// The two lines the child may write for one layer, built before fork (texts are this file's, no escaping).
layer_lines layer_line_pair(layer l, const std::string& ok_how, const std::string& missing_how) {
  const std::string head = "{\"event\":\"" + std::string(to_string(launch_event::sandbox_layer)) + "\",\"layer\":\"" +
                           std::string(to_string(l)) + "\",\"ok\":";
  return {head + "true,\"how\":\"" + ok_how + "\"}\n", head + "false,\"how\":\"" + missing_how + "\"}\n"};
}

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
constexpr std::uint64_t fs_execute = 1ULL << 0;                                      // EXECUTE
constexpr std::uint64_t fs_write_access = (1ULL << 1) |                              // WRITE_FILE
                                          (1ULL << 4) |                              // REMOVE_DIR
                                          (1ULL << 5) |                              // REMOVE_FILE
                                          (1ULL << 6) |                              // MAKE_CHAR
                                          (1ULL << 7) |                              // MAKE_DIR
                                          (1ULL << 8) |                              // MAKE_REG
                                          (1ULL << 9) |                              // MAKE_SOCK
                                          (1ULL << 10) |                             // MAKE_FIFO
                                          (1ULL << 11) |                             // MAKE_BLOCK
                                          (1ULL << 12);                              // MAKE_SYM
constexpr std::uint64_t fs_refer = 1ULL << 13;                                       // ABI 2
constexpr std::uint64_t fs_truncate = 1ULL << 14;                                    // ABI 3
constexpr std::uint64_t net_tcp = (1ULL << 0) | (1ULL << 1);                         // ABI 4: BIND_TCP, CONNECT_TCP
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
  struct rlimit r {
    value, value
  };
  ::setrlimit(resource, &r);
}

// ---- the mount namespace's view (child side, raw system calls only) ----

constexpr unsigned open_tree_clone = 1;        // OPEN_TREE_CLONE of <linux/mount.h>
constexpr unsigned at_recursive = 0x8000;      // AT_RECURSIVE
constexpr unsigned move_mount_empty_from = 4;  // MOVE_MOUNT_F_EMPTY_PATH
constexpr int max_device_nodes = 48;

struct dirent64_head {  // linux_dirent64
  std::uint64_t ino;
  std::int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[1];
};

// Calls `each(name, type)` for every entry of the open directory `dir` but . and ..
template <typename F>
void for_each_entry(int dir, F each) {
  alignas(8) char buf[4096];
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (n <= 0) return;
    for (long at = 0; at < n;) {
      const auto* d = reinterpret_cast<const dirent64_head*>(buf + at);
      at += d->reclen;
      if (std::strcmp(d->name, ".") != 0 && std::strcmp(d->name, "..") != 0) each(d->name, d->type);
    }
  }
}

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// "/dev/" + name into `out` (async-signal-safe; names longer than the buffer are skipped).
bool dev_path(char (&out)[96], const char* name) {
  const std::size_t n = std::strlen(name);
  if (n + 6 > sizeof out) return false;
  std::memcpy(out, "/dev/", 5);
  std::memcpy(out + 5, name, n + 1);
  return true;
}

// /dev becomes a fresh tmpfs holding only what kernels need: null, zero, full, random, urandom, the GPU's nodes
// (/dev/nvidia*, /dev/nvidia-caps, /dev/dri), a private /dev/shm of `shm_options` and the /proc/self/fd links.
// The nodes are bind mounts of the host's, taken (open_tree) before the tmpfs covers them. No terminal, no
// block device, no /dev/mem: a candidate that could write a loop device or type into a tty finds neither.
bool reduce_dev(const char* shm_options) {
  struct node {
    char name[64];
    int tree;
    bool dir;
  } nodes[max_device_nodes];
  int count = 0;
  auto take = [&](const char* name, bool dir) {
    char path[96];
    if (count >= max_device_nodes || std::strlen(name) >= sizeof nodes[0].name || !dev_path(path, name)) return;
    const int tree = static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, path, open_tree_clone | O_CLOEXEC | (dir ? at_recursive : 0)));
    if (tree < 0) return;
    std::memcpy(nodes[count].name, name, std::strlen(name) + 1);
    nodes[count].tree = tree;
    nodes[count].dir = dir;
    ++count;
  };
  for (const char* name : {"null", "zero", "full", "random", "urandom"}) take(name, false);
  const int basic = count;
  const int dev = ::open("/dev", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dev < 0) return false;
  for_each_entry(dev, [&](const char* name, unsigned char type) {
    if (starts_with(name, "nvidia") || std::strcmp(name, "dri") == 0) take(name, type == DT_DIR);
  });
  ::close(dev);
  if (basic != 5) return false;
  if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0) return false;
  bool ok = true;
  for (int i = 0; i < count; ++i) {
    char path[96];
    dev_path(path, nodes[i].name);
    if (nodes[i].dir) {
      ok = ok && ::mkdir(path, 0755) == 0;
    } else {
      const int f = ::open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      ok = ok && f >= 0;
      if (f >= 0) ::close(f);
    }
    ok = ok && ::syscall(SYS_move_mount, nodes[i].tree, "", AT_FDCWD, path, move_mount_empty_from) == 0;
    ::close(nodes[i].tree);
  }
  ok = ok && ::symlink("/proc/self/fd", "/dev/fd") == 0 && ::symlink("/proc/self/fd/0", "/dev/stdin") == 0 &&
       ::symlink("/proc/self/fd/1", "/dev/stdout") == 0 && ::symlink("/proc/self/fd/2", "/dev/stderr") == 0;
  ok = ok && ::mkdir("/dev/shm", 01777) == 0 &&
       ::mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, shm_options) == 0;
  return ok &&
         ::mount(nullptr, "/dev", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC, nullptr) == 0;
}

// /proc/sys read-only (a bind of itself, remounted): no sysctl can be changed, whoever the candidate is.
bool proc_sys_read_only() {
  return ::mount("/proc/sys", "/proc/sys", nullptr, MS_BIND | MS_REC, nullptr) == 0 &&
         ::mount(nullptr, "/proc/sys", nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                 nullptr) == 0;
}

// The scratch folder becomes a tmpfs of `options` (its size limit): what the candidate writes never reaches the
// disk and is gone when the namespace ends, whatever modes it set. The regular files the caller put there (the
// job) are copied in first, owned by `uid`/`gid` when those are not -1.
bool scratch_on_tmpfs(const char* scratch, const char* options, uid_t uid, gid_t gid) {
  const int old = ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (old < 0) return false;
  bool ok = ::mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, options) == 0;
  const int fresh = ok ? ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  ok = ok && fresh >= 0;
  if (ok) {
    for_each_entry(old, [&](const char* name, unsigned char type) {
      if (type != DT_REG) return;
      const int from = ::openat(old, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
      const int to = ::openat(fresh, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      char buf[8192];
      ssize_t n = 0;
      while (from >= 0 && to >= 0 && (n = ::read(from, buf, sizeof buf)) > 0) {
        if (::write(to, buf, static_cast<std::size_t>(n)) != n) ok = false;
      }
      if (from < 0 || to < 0 || n < 0) ok = false;
      if (to >= 0 && uid != static_cast<uid_t>(-1) && ::fchown(to, uid, gid) != 0) ok = false;
      if (from >= 0) ::close(from);
      if (to >= 0) ::close(to);
    });
  }
  if (fresh >= 0) ::close(fresh);
  ::close(old);
  return ok;
}

// Where no tmpfs can be mounted, a caller that was root hands the scratch folder (and what it put there) to the
// unprivileged uid, which must write there.
void hand_over_scratch(const char* scratch, uid_t uid, gid_t gid) {
  const int dir = ::open(scratch, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  ::fchown(dir, uid, gid);
  for_each_entry(dir, [&](const char* name, unsigned char) { ::fchownat(dir, name, uid, gid, AT_SYMLINK_NOFOLLOW); });
  ::close(dir);
}

// Root leaves host root for good: no supplementary groups, uid/gid `unprivileged`, and of all capabilities only
// CAP_DAC_READ_SEARCH, kept through execve as an ambient one, so that the worker can still read what root could
// (a Python install under /root, the sources) while it writes, changes and opens nothing as root.
bool leave_root(uid_t uid, gid_t gid) {
  constexpr int keep = CAP_DAC_READ_SEARCH;
  for (int cap = 0; cap < 64; ++cap) {
    if (cap != keep && ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  if (::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0 || ::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 ||
      ::setresuid(uid, uid, uid) != 0) {
    return false;
  }
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  data[0].effective = data[0].permitted = data[0].inheritable = 1U << keep;
  if (::syscall(SYS_capset, &header, data) != 0) return false;
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, keep, 0, 0) != 0) return false;
  return ::getuid() == uid && ::geteuid() == uid && ::getgid() == gid;
}

// Everything the sandboxed child needs, built before fork: after fork only async-signal-safe calls are allowed, so
// the child formats nothing and allocates nothing. Built in place (its pointers point into its own strings).
struct child_plan {
  std::vector<std::string> args;
  std::vector<char*> c_args;
  std::vector<std::string> env;
  std::vector<char*> c_env;
  bool root = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string uid_map;
  std::string gid_map;
  std::string dir;
  std::string scratch_options;
  std::string shm_options;
  std::string cpu_line;
  std::string root_line;
  std::string none_line;
  // The child fills in the Landlock ABI (one digit) without formatting.
  std::string fs_ok_line;
  std::size_t abi_digit_1 = 0;
  std::size_t abi_digit_2 = 0;
  std::string fs_none_line;
  std::string proc_ok_line;
  std::string proc_none_line;
  layer_lines user_lines;
  layer_lines session_lines;
  layer_lines proc_sys_lines;
  layer_lines dev_lines;
  layer_lines scratch_lines;
  layer_lines tasks_lines;
  rlim_t cpu = 0;
  rlim_t memory = 0;
  rlim_t file = 0;
  rlim_t nproc = 0;
  bool limit_address_space = false;

  child_plan(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
             const std::filesystem::path& workdir, const sandbox_limits& limits, bool limit_as);
  child_plan(const child_plan&) = delete;
  child_plan& operator=(const child_plan&) = delete;
};

child_plan::child_plan(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                       const std::filesystem::path& workdir, const sandbox_limits& limits, bool limit_as)
    : args(argv), env(environment), root(::geteuid() == 0), limit_address_space(limit_as) {
  args.push_back("--result-fd");
  args.push_back(std::to_string(result_fd_in_worker));
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  for (auto& e : env) c_env.push_back(e.data());
  c_env.push_back(nullptr);
  // Root runs the candidate as nobody; anyone else as themselves (never root: only root maps to root).
  uid = root ? unprivileged_uid : ::getuid();
  gid = root ? unprivileged_uid : ::getgid();
  uid_map = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
  gid_map = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  dir = workdir.string();
  scratch_options = "mode=0700,size=" + std::to_string(limits.scratch_mb) + "m" +
                    (root ? ",uid=" + std::to_string(uid) + ",gid=" + std::to_string(gid) : std::string());
  shm_options = "mode=1777,size=" + std::to_string(limits.shm_mb) + "m";
  cpu_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"user+network namespace\"}\n";
  root_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"network namespace\"}\n";
  none_line =
      "{\"event\":\"sandbox\",\"network\":\"seccomp\",\"how\":\"namespaces are not permitted here; network sockets "
      "are refused by the seccomp filter only\"}\n";
  fs_ok_line =
      "{\"event\":\"sandbox_fs\",\"landlock\":#,\"how\":\"Landlock ABI #: writes only in its scratch folder, "
      "/dev and its own /proc\"}\n";
  abi_digit_1 = fs_ok_line.find('#');
  abi_digit_2 = fs_ok_line.find('#', abi_digit_1 + 1);
  fs_none_line =
      "{\"event\":\"sandbox_fs\",\"landlock\":0,\"how\":\"no Landlock here: the candidate may write wherever the "
      "user may\"}\n";
  proc_ok_line = "{\"event\":\"sandbox_proc\",\"own\":true,\"how\":\"its own process namespace and /proc\"}\n";
  proc_none_line =
      "{\"event\":\"sandbox_proc\",\"own\":false,\"how\":\"no process namespace here: the processes of this user "
      "(and their environments, where readable) are visible\"}\n";
  user_lines = layer_line_pair(
      layer::user,
      root ? "started as root, it runs as host uid " + std::to_string(uid) +
                 " (nobody) without groups and with no capability but CAP_DAC_READ_SEARCH"
           : "it runs as the caller's uid " + std::to_string(uid) + ", not root",
      root ? "started as root, it could not leave host root (setresuid to " + std::to_string(uid) + " failed)"
           : "it runs as host root");
  session_lines = layer_line_pair(layer::session,
                                  "a new session without a controlling terminal; stdin, stdout and stderr on /dev/null",
                                  "it could not start a new session or put stdin, stdout and stderr on /dev/null");
  proc_sys_lines = layer_line_pair(layer::proc_sys, "/proc/sys read-only", "/proc/sys could not be made read-only");
  dev_lines =
      layer_line_pair(layer::dev,
                      "/dev holds only null, zero, full, random, urandom and the GPU's nodes; a private /dev/shm of " +
                          std::to_string(limits.shm_mb) + " MiB",
                      "/dev could not be reduced (the host's devices and /dev/shm are reachable)");
  scratch_lines = layer_line_pair(
      layer::scratch,
      "its scratch folder is a tmpfs of " + std::to_string(limits.scratch_mb) + " MiB, gone when it ends",
      "its scratch folder is on the host's disk, without a size limit");
  tasks_lines = layer_line_pair(
      layer::tasks, "at most " + std::to_string(limits.processes) + " tasks (RLIMIT_NPROC of a uid that is not root)",
      "no process limit holds (RLIMIT_NPROC does not bind root)");
  cpu = static_cast<rlim_t>(limits.cpu_s);
  memory = static_cast<rlim_t>(limits.memory_mb) << 20;
  file = static_cast<rlim_t>(limits.file_mb) << 20;
  nproc = static_cast<rlim_t>(limits.processes);
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
    got.unprivileged = leave_root(plan.uid, plan.gid);
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

// PID 1 of the new namespace: its own /proc, /dev and scratch, then the worker as PID 2, reaped here.
[[noreturn]] void namespace_init(child_plan& plan, int fd, namespaces_entered got) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  const bool proc = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0 &&
                    ::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0;
  write_all(fd, proc ? plan.proc_ok_line.c_str() : plan.proc_none_line.c_str());
  report_layer(fd, plan.proc_sys_lines, proc && proc_sys_read_only());
  report_layer(fd, plan.dev_lines, reduce_dev(plan.shm_options.c_str()));
  report_layer(
      fd, plan.scratch_lines,
      scratch_on_tmpfs(plan.dir.c_str(), plan.scratch_options.c_str(), got.as_root ? plan.uid : static_cast<uid_t>(-1),
                       got.as_root ? plan.gid : static_cast<gid_t>(-1)));
  if (got.as_root) got.unprivileged = leave_root(plan.uid, plan.gid);
  report_layer(fd, plan.user_lines, got.unprivileged);
  report_layer(fd, plan.tasks_lines, got.unprivileged);
  if (!got.unprivileged) ::_exit(126);  // never run untrusted code as host root
  write_landlock_line(plan, fd, restrict_writes(plan.dir.c_str()));
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
  report_layer(fd, plan.tasks_lines, unprivileged);
  if (!unprivileged) ::_exit(126);
  write_landlock_line(plan, fd, restrict_writes(plan.dir.c_str()));
  exec_worker(plan);
}

// The forked child: its own session, descriptors, namespaces; each layer reported on the result pipe as it is set.
[[noreturn]] void sandboxed_child(child_plan& plan, int pipe_write_end) {
  // A session and process group of its own, without the caller's controlling terminal: nothing in it can type
  // into the user's shell (TIOCSTI) or be stopped by the terminal.
  const bool own_session = ::setsid() >= 0;
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

sandboxed_process spawn_sandboxed(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                  const std::filesystem::path& workdir, const sandbox_limits& limits,
                                  bool limit_address_space) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw error(errc::internal, std::string("pipe failed: ") + std::strerror(errno));
  child_plan plan(argv, env, workdir, limits, limit_address_space);
  pid_t pid = ::fork();
  if (pid < 0) throw error(errc::internal, std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) sandboxed_child(plan, fds[1]);
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

#if defined(__x86_64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_X86_64;
constexpr std::uint32_t x32_syscall_bit = 0x40000000;  // __X32_SYSCALL_BIT of <asm/unistd.h>
#elif defined(__aarch64__)
constexpr std::uint32_t audit_arch = AUDIT_ARCH_AARCH64;
#endif
constexpr unsigned long tiocsti = 0x5412;    // TIOCSTI: type into a terminal
constexpr unsigned long tioclinux = 0x541C;  // TIOCLINUX: the console's selection pasting does the same

// What the filter refused, by system call: written by the SIGSYS handler (async-signal-safe: atomics only), read
// by blocked(). A refused call is recorded however it was made (Python, libc, ctypes, a raw syscall).
constexpr int max_refused_kinds = 16;
struct refused_slot {
  std::atomic<std::uint64_t> key{0};  // arch << 32 | nr, plus one (0 = free)
  std::atomic<int> count{0};
};
refused_slot refused[max_refused_kinds];
std::atomic<int> refused_overflow{0};

void record_refused(std::uint32_t arch, std::uint32_t nr) {
  const std::uint64_t key = ((static_cast<std::uint64_t>(arch) << 32) | nr) + 1;
  for (auto& slot : refused) {
    std::uint64_t seen = slot.key.load(std::memory_order_relaxed);
    if (seen == 0 && slot.key.compare_exchange_strong(seen, key)) seen = key;
    if (seen == key) {
      slot.count.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  refused_overflow.fetch_add(1, std::memory_order_relaxed);
}

bool native_call(std::uint32_t arch, std::uint32_t nr) {
#if defined(__x86_64__)
  return arch == audit_arch && nr < x32_syscall_bit;
#else
  return arch == audit_arch;
#endif
}

// SIGSYS from SECCOMP_RET_TRAP: record what was refused and make the call return an ordinary error (EPERM, or
// ENOSYS for a foreign ABI or an unknown number), so the candidate goes on and the report can name the call.
void on_sigsys(int, siginfo_t* info, void* context) {
  auto* uc = static_cast<ucontext_t*>(context);
  const auto nr = static_cast<std::uint32_t>(info->si_syscall);
  const auto arch = static_cast<std::uint32_t>(info->si_arch);
  record_refused(arch, nr);
  const long result = native_call(arch, nr) ? -EPERM : -ENOSYS;
#if defined(__x86_64__)
  uc->uc_mcontext.gregs[REG_RAX] = result;
#elif defined(__aarch64__)
  uc->uc_mcontext.regs[0] = static_cast<unsigned long long>(result);
#endif
}

std::string refused_name(std::uint32_t arch, std::uint32_t nr) {
  if (!native_call(arch, nr)) {
#if defined(__x86_64__)
    if (arch == audit_arch) return "x32 system call " + std::to_string(nr & ~x32_syscall_bit);
    if (arch == AUDIT_ARCH_I386) return "i386 system call " + std::to_string(nr);
#endif
    return "system call " + std::to_string(nr) + " of a foreign ABI";
  }
  switch (nr) {
    case SYS_socket: return "socket";
    case SYS_io_uring_setup: return "io_uring_setup";
    case SYS_ptrace: return "ptrace";
    case SYS_process_vm_readv: return "process_vm_readv";
    case SYS_process_vm_writev: return "process_vm_writev";
    case SYS_pidfd_getfd: return "pidfd_getfd";
    case SYS_open_by_handle_at: return "open_by_handle_at";
    case SYS_ioctl: return "ioctl(TIOCSTI)";
    default: return "system call " + std::to_string(nr);
  }
}

}  // namespace

bool install_filter(int phase, std::string& why) {
#if !defined(__x86_64__) && !defined(__aarch64__)
  (void)phase;
  why = "seccomp filters are built for x86-64 and aarch64 only";
  return false;
#else
  // Phase 2 adds nothing to the filter: a kernel's first call may start its compilers (Triton runs ptxas and a
  // C compiler), so new processes are allowed; restrict_execute confines what they may run, RLIMIT_NPROC how
  // many there are, and the refusals below hold in them too (the filter is inherited).
  if (phase >= 2) return true;
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
  const auto arg1_offset = arg0_offset + 8;
  // Every refusal traps, so the handler can record it (and a foreign-ABI call gets ENOSYS rather than a kill).
  stmt(BPF_LD | BPF_W | BPF_ABS, static_cast<std::uint32_t>(offsetof(seccomp_data, arch)));
  jump(BPF_JMP | BPF_JEQ | BPF_K, audit_arch, 1, 0);
  stmt(BPF_RET | BPF_K, trap);  // a foreign syscall ABI (i386) is never legitimate here
  stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset);
#if defined(__x86_64__)
  // x32 system calls carry AUDIT_ARCH_X86_64 too, with __X32_SYSCALL_BIT in the number: the checks below compare
  // plain numbers, so an x32 socket() would pass them. Nothing here uses the x32 ABI; numbers at and beyond the
  // bit (syscall(-1) among them) are refused with ENOSYS, as the kernel would.
  jump(BPF_JMP | BPF_JGE | BPF_K, x32_syscall_bit, 0, 1);
  stmt(BPF_RET | BPF_K, trap);
#endif
  // socket(domain, ...): netlink stays (interface queries), everything else traps, AF_UNIX included: the
  // reference (and with it CUDA's set-up) ran before this filter, and a Unix socket on disk (the Docker
  // daemon's, say) would give the candidate what the network namespace takes away.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 0, 4);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, AF_NETLINK, 0, 1);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, trap);
  // ioctl(fd, TIOCSTI or TIOCLINUX, ...): typing into a terminal. The sandbox has none (a new session, stdio on
  // /dev/null, no tty in its /dev); refused here as well.
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_ioctl, 0, 5);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, tiocsti, 2, 0);
  jump(BPF_JMP | BPF_JEQ | BPF_K, tioclinux, 1, 0);
  stmt(BPF_RET | BPF_K, allow);
  stmt(BPF_RET | BPF_K, trap);
  // sigaction(SIGSYS, new): the handler that records refusals stays (reading it is fine). Refused with a plain
  // EPERM, not a trap: Python's subprocess resets every handler in its vfork child with all signals blocked,
  // and a trap delivered while SIGSYS is blocked kills the process (that is how Triton's compiler steps died).
  jump(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigaction, 0, 7);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg0_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, SIGSYS, 0, 5);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset);
  jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2);
  stmt(BPF_LD | BPF_W | BPF_ABS, arg1_offset + 4);
  jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0);
  stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  stmt(BPF_LD | BPF_W | BPF_ABS, nr_offset);
  // io_uring (it could open sockets behind seccomp's back); another process's memory and descriptors (the
  // judge's, above all: already out of reach, since the judge is not dumpable and nothing here has
  // CAP_SYS_PTRACE); open_by_handle_at (with CAP_DAC_READ_SEARCH it opens files by handle, past the mount
  // namespace).
  for (long nr : {SYS_io_uring_setup, SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev, SYS_pidfd_getfd,
                  SYS_open_by_handle_at}) {
    jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<std::uint32_t>(nr), 0, 1);
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

bool restrict_execute(const std::vector<std::filesystem::path>& beneath, const std::filesystem::path& scratch,
                      std::string& why) {
  const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) {
    why = "no Landlock here: what the candidate's processes may execute is not confined; ";
    return false;
  }
  // Every Landlock ruleset of ABI 2 and later denies moving a file to another folder (EXDEV) unless a rule grants
  // it, even one that handles only execution: without this, Triton's cache (a file written in a temporary folder
  // and renamed into place) fails with "Invalid cross-device link". Moves stay allowed inside scratch alone.
  landlock_attr attr{fs_execute | (abi >= 2 ? fs_refer : 0), 0, 0};
  const int ruleset = static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof(std::uint64_t), 0));
  if (ruleset < 0) {
    why = std::string("landlock_create_ruleset failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  auto add = [&](const std::filesystem::path& dir, std::uint64_t access) {
    const int fd = ::open(dir.c_str(), O_PATH | O_CLOEXEC);
    if (fd < 0) return true;  // a folder this machine does not have
    landlock_beneath rule{access, fd};
    const bool added = ::syscall(SYS_landlock_add_rule, ruleset, 1 /* LANDLOCK_RULE_PATH_BENEATH */, &rule, 0) == 0;
    ::close(fd);
    if (!added) why = "landlock_add_rule(" + dir.string() + ") failed: " + std::strerror(errno) + "; ";
    return added;
  };
  bool rules = true;
  for (const auto& dir : beneath) rules = rules && add(dir, fs_execute);
  if (abi >= 2 && !scratch.empty()) rules = rules && add(scratch, fs_refer);
  if (!rules) {
    ::close(ruleset);
    return false;
  }
  const bool ok =
      ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && ::syscall(SYS_landlock_restrict_self, ruleset, 0) == 0;
  if (!ok) why = std::string("landlock_restrict_self failed: ") + std::strerror(errno) + "; ";
  ::close(ruleset);
  return ok;
}

const std::vector<std::filesystem::path>& system_program_folders() {
  static const std::vector<std::filesystem::path> folders = {"/usr",   "/bin",   "/sbin", "/lib",
                                                             "/lib64", "/lib32", "/opt"};
  return folders;
}

bool drop_capabilities(std::string& why) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct before[2] = {};
  if (::syscall(SYS_capget, &header, before) != 0) {
    why = std::string("capget failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  // CAP_DAC_READ_SEARCH is what spawn_sandboxed leaves a worker started as root (reading what root could);
  // it stays, through execve too, so that this process and the compilers it may start can read the install.
  constexpr int read_search = CAP_DAC_READ_SEARCH;
  const std::uint32_t keep = before[0].permitted & (1U << read_search);
  // Dropping from the bounding set needs CAP_SETPCAP; without it there is nothing to drop from (a worker that is
  // not root in its namespace lost its capabilities at execve), which the check below confirms.
  for (int cap = 0; cap < 64; ++cap) {
    if (keep && cap == read_search) continue;
    if (::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) == 1) ::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
  }
  ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_data_struct only[2] = {};
  only[0].effective = only[0].permitted = only[0].inheritable = keep;
  if (::syscall(SYS_capset, &header, only) != 0) {
    why = std::string("capset failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  if (keep) ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, read_search, 0, 0);
  __user_cap_data_struct now[2] = {};
  if (::syscall(SYS_capget, &header, now) != 0) {
    why = std::string("capget failed: ") + std::strerror(errno) + "; ";
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const std::uint32_t allowed = i == 0 ? keep : 0;
    if ((now[i].effective | now[i].permitted | now[i].inheritable) & ~allowed) {
      why = "capabilities are left after dropping them; ";
      return false;
    }
  }
  return true;
}

blocked_counts blocked() {
  blocked_counts b;
  for (const auto& slot : refused) {
    const std::uint64_t key = slot.key.load();
    const int count = slot.count.load();
    if (key == 0 || count == 0) continue;
    const auto arch = static_cast<std::uint32_t>((key - 1) >> 32);
    const auto nr = static_cast<std::uint32_t>((key - 1) & 0xffffffffU);
    if (!native_call(arch, nr)) {
      b.foreign_abi += count;
    } else if (nr == SYS_socket) {
      b.sockets += count;
    } else if (nr == SYS_io_uring_setup) {
      b.io_uring += count;
    } else {
      b.other += count;
    }
    b.calls += (b.calls.empty() ? "" : ", ") + refused_name(arch, nr) + " x" + std::to_string(count);
  }
  if (const int more = refused_overflow.load())
    b.calls += (b.calls.empty() ? "" : ", ") + std::to_string(more) + " more";
  return b;
}

}  // namespace rnx::sandbox
