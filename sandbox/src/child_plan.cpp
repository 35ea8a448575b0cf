// The sandboxed child's plan: its argv, environment, ids, mount options and every line it may write, formatted
// before fork.
#include "child_plan.hpp"

#include "detail.hpp"

#include <unistd.h>

namespace rnx::sandbox::detail {

namespace {

// The two lines the child may write for one layer, built before fork (texts are this file's, no escaping).
layer_lines layer_line_pair(layer l, const std::string& ok_how, const std::string& missing_how) {
  const std::string head = "{\"event\":\"" + std::string(to_string(launch_event::sandbox_layer)) + "\",\"layer\":\"" +
                           std::string(to_string(l)) + "\",\"ok\":";
  return {head + "true,\"how\":\"" + ok_how + "\"}\n", head + "false,\"how\":\"" + missing_how + "\"}\n"};
}

}  // namespace

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

}  // namespace rnx::sandbox::detail
