// The sandboxed child's plan: its argv, environment, ids, mount options and every line it may write, formatted
// before fork.
#include "child_plan.hpp"

#include "detail.hpp"
#include "host_view.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

namespace rnx::sandbox::detail {

namespace {

// The two lines the child may write for one layer, built before fork (texts are this file's, no escaping).
layer_lines layer_line_pair(layer l, const std::string& ok_how, const std::string& missing_how) {
  const std::string head = "{\"event\":\"" + std::string(to_string(launch_event::sandbox_layer)) + "\",\"layer\":\"" +
                           std::string(to_string(l)) + "\",\"ok\":";
  return {head + "true,\"how\":\"" + ok_how + "\"}\n", head + "false,\"how\":\"" + missing_how + "\"}\n"};
}

// The Landlock rules and (started as root) the covers of the host's closed folders, from what the worker needs.
void plan_files(child_plan& plan, const std::filesystem::path& program, const sandbox_limits& limits) {
  const host_view view = plan_host_view(program, plan.env, limits.readable, plan.dir, plan.root);
  auto rule = [&](const std::filesystem::path& path, std::uint64_t access) {
    plan.rules.paths.push_back(path.string());
    plan.rules.access.push_back(access);
  };
  rule(plan.dir, fs_writes | fs_read);
  for (const char* dir : {"/dev", "/proc"}) rule(dir, fs_writes | fs_read);
  for (const char* dir : {"/etc", "/sys"}) rule(dir, fs_read);
  for (const auto& dir : system_program_folders()) rule(dir, fs_execute | fs_read);
  for (const auto& dir : view.programs) rule(dir, fs_execute | fs_read);
  for (const auto& path : view.readable) {
    std::error_code ec;
    rule(path, std::filesystem::is_directory(path, ec) ? fs_read : fs_read_file);
  }
  plan.rules.confine_reads = limits.confine_reads;
  if (!view.python_bin.empty()) {
    auto path =
        std::find_if(plan.env.begin(), plan.env.end(), [](const std::string& e) { return e.rfind("PATH=", 0) == 0; });
    if (path == plan.env.end()) {
      plan.env.push_back("PATH=" + view.python_bin.string() + ":/usr/bin:/bin");
    } else {
      path->insert(5, view.python_bin.string() + ":");
    }
  }
  for (const auto& c : view.covers) plan.reveal.covers.push_back(c.string());
  for (const auto& f : view.skeleton) plan.reveal.skeleton.push_back(f.string());
  for (const auto& s : view.shown) {
    plan.reveal.shown.push_back(s.path.string());
    plan.reveal.shown_folder.push_back(s.folder ? 1 : 0);
  }
  plan.reveal.trees.assign(view.shown.size(), -1);
}

// Where this process's command line lies in its memory (fields 48 and 49 of /proc/self/stat: addresses).
void find_command_line(child_plan& plan) {
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return;
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  std::uintptr_t start = 0, end = 0;
  for (int i = 3; i <= 49 && fields >> field; ++i) {
    if (i == 48) start = std::stoull(field);
    if (i == 49) end = std::stoull(field);
  }
  if (start == 0 || end <= start) return;
  static_assert(sizeof start == sizeof plan.command_line);
  std::memcpy(&plan.command_line, &start, sizeof start);  // an address the kernel reported, as a pointer
  plan.command_line_size = end - start;
}

}  // namespace

child_plan::child_plan(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
                       const std::filesystem::path& workdir, const sandbox_limits& limits, bool limit_as)
    : args(argv), env(environment), root(::geteuid() == 0), limit_address_space(limit_as) {
  args.push_back("--result-fd");
  args.push_back(std::to_string(result_fd_in_worker));
  for (auto& a : args) c_args.push_back(a.data());
  c_args.push_back(nullptr);
  // Root runs the candidate as nobody; anyone else as themselves (never root: only root maps to root).
  uid = root ? unprivileged_uid : ::getuid();
  gid = root ? unprivileged_uid : ::getgid();
  uid_map = std::to_string(uid) + " " + std::to_string(uid) + " 1\n";
  gid_map = std::to_string(gid) + " " + std::to_string(gid) + " 1\n";
  dir = workdir.string();
  const std::string owner = root ? ",uid=" + std::to_string(uid) + ",gid=" + std::to_string(gid) : std::string();
  scratch_options = "mode=0700,size=" + std::to_string(limits.scratch_mb) + "m" + owner;
  compiled_dir = compiled_folder(workdir).string();
  handed_dir = handed_folder(workdir).string();
  std::error_code no_folder;
  handed = std::filesystem::is_directory(handed_folder(workdir), no_folder);
  compiled_options = "mode=0700,size=" + std::to_string(limits.compiled_mb) + "m" + owner;
  shm_options = "mode=1777,size=" + std::to_string(limits.shm_mb) + "m";
  cpu_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"user+network namespace\"}\n";
  root_line = "{\"event\":\"sandbox\",\"network\":\"namespace\",\"how\":\"network namespace\"}\n";
  none_line =
      "{\"event\":\"sandbox\",\"network\":\"seccomp\",\"how\":\"namespaces are not permitted here; network sockets "
      "are refused by the seccomp filter only\"}\n";
  fs_ok_line =
      "{\"event\":\"sandbox_fs\",\"landlock\":#,\"how\":\"Landlock ABI #: writes only in its scratch folder, "
      "/dev and its own /proc; programs started only from the system's folders and the worker's install" +
      std::string(limits.confine_reads ? "; reads only there, in /etc, /sys, scratch and the job's files" : "") +
      "\"}\n";
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
                 " (nobody) without groups and with no capability"
           : "it runs as the caller's uid " + std::to_string(uid) + ", not root",
      root ? "started as root, it could not leave host root (setresuid to " + std::to_string(uid) + " failed)"
           : "it runs as host root");
  host_files_lines = layer_line_pair(
      layer::host_files,
      root ? "no capability reads past file modes; the folders nobody may enter (/root) are covered, what the worker "
             "needs beneath them shown read-only"
           : "no capability reads past file modes",
      "started as root, what the worker needs beneath folders nobody may enter (/root) could not be shown");
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
      "its scratch folder is a noexec tmpfs of " + std::to_string(limits.scratch_mb) +
          " MiB, gone when it ends; compiled code is mapped only from its .compiled folder, a tmpfs of " +
          std::to_string(limits.compiled_mb) + " MiB" +
          (handed ? "; the job's files handed in read-only (handed/), not reached by their host paths" : ""),
      "its scratch folder is on the host's disk, without a size limit, and files written there may be mapped as "
      "code" +
          std::string(handed ? ", or the job's files could not be handed in read-only" : ""));
  tasks_lines = layer_line_pair(
      layer::tasks, "at most " + std::to_string(limits.processes) + " tasks (RLIMIT_NPROC of a uid that is not root)",
      "no process limit holds (RLIMIT_NPROC does not bind root)");
  cpu = static_cast<rlim_t>(limits.cpu_s);
  memory = static_cast<rlim_t>(limits.memory_mb) << 20;
  file = static_cast<rlim_t>(limits.file_mb) << 20;
  nproc = static_cast<rlim_t>(limits.processes);
  plan_files(*this, argv.empty() ? std::filesystem::path() : std::filesystem::path(argv.front()), limits);
  for (auto& e : env) c_env.push_back(e.data());
  c_env.push_back(nullptr);
  find_command_line(*this);
}

}  // namespace rnx::sandbox::detail
