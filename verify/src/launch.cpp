// The verify worker's launch: its job file, the sandboxed process, its result lines read until it ends or is
// killed for the wall-clock or memory limit.
#include "orchestrator.hpp"

#include "job_file.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/message_lines.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

namespace bj = boost::json;
namespace fs = std::filesystem;

namespace rnx::verify::detail {

namespace {

bj::object job_json(const verify_options& o) {
  job_file j;
  j.name = o.reference.name;
  j.reference = {fs::absolute(o.reference.path).string(), o.reference.entry};
  j.candidate = {fs::absolute(o.candidate).string(), o.candidate_entry};
  for (const auto& in : o.reference.inputs) j.inputs.push_back({in.name, in.text});
  j.batches = o.reference.batches;
  j.dtypes = o.reference.dtypes;
  j.device = o.reference.device;
  for (const auto& [d, t] : o.reference.tolerances) j.tolerances[d] = {t.rtol, t.atol};
  j.seed = o.seed & 0x7fffffffffffffffULL;
  j.speedup_limit = o.speedup_limit;
  j.implausible_speedup = o.speedup_review ? on_implausible::review : on_implausible::reject;
  j.cache_dir = o.cache_dir.string();
  return json::to_object(j);
}

// The job's kernels as the worker reaches them: each copied with this process's rights into the sandbox's handed
// folder, with the sources beside it that are its own (sandbox::kernel_sources). The worker never reads them
// where they lie: a folder above them nobody may enter (root's mode-700 temporary folder, /root) does not matter,
// and nothing else of their folders (a .env, a cloud login's gha-creds-*.json) is in its reach.
struct handed_kernels {
  fs::path reference;
  fs::path candidate;
  // (the handed folder as the worker names it, the caller's folder): paths in the worker's words shown as the
  // user's, so a traceback or an error names the file the user wrote.
  std::vector<std::pair<std::string, std::string>> shown_as;
};

handed_kernels hand_kernels(const verify_options& o, const fs::path& dir) {
  handed_kernels h;
  h.reference = sandbox::hand_kernel(dir, o.reference.path, "reference");
  h.candidate = sandbox::hand_kernel(dir, o.candidate, "candidate");
  for (const auto& [handed, original] :
       {std::pair{h.reference, o.reference.path}, std::pair{h.candidate, o.candidate}}) {
    h.shown_as.emplace_back((handed.parent_path() / "").string(), (fs::absolute(original).parent_path() / "").string());
  }
  return h;
}

// Every string in `v` with the handed folders' paths written as the caller's.
void show_paths_as_callers(bj::value& v, const std::vector<std::pair<std::string, std::string>>& shown_as) {
  if (v.is_object()) {
    for (auto& [key, item] : v.as_object()) show_paths_as_callers(item, shown_as);
  } else if (v.is_array()) {
    for (auto& item : v.as_array()) show_paths_as_callers(item, shown_as);
  } else if (v.is_string()) {
    std::string s(v.as_string());
    bool changed = false;
    for (const auto& [from, to] : shown_as) {
      for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) {
        s.replace(at, from.size(), to);
        changed = true;
      }
    }
    if (changed) v = bj::string(s);
  }
}

bool at_or_beneath(const fs::path& p, const fs::path& folder) {
  const auto rel = p.lexically_relative(folder);
  return !rel.empty() && *rel.begin() != "..";
}

// PYTHONPATH and LD_LIBRARY_PATH without the folders that hold a kernel (a checkout on PYTHONPATH): the sandbox
// shows the folders these name to the worker, and the kernels' own files are handed to it instead.
std::vector<std::string> without_kernel_folders(std::vector<std::string> env, const std::vector<fs::path>& kernels) {
  for (auto& entry : env) {
    const auto eq = entry.find('=');
    const std::string name = entry.substr(0, eq);
    if (eq == std::string::npos || (name != "PYTHONPATH" && name != "LD_LIBRARY_PATH")) continue;
    std::string kept;
    std::istringstream list(entry.substr(eq + 1));
    for (std::string folder; std::getline(list, folder, ':');) {
      std::error_code ec;
      const fs::path f = fs::weakly_canonical(fs::absolute(folder.empty() ? "." : folder), ec);
      const bool holds_kernel = std::any_of(kernels.begin(), kernels.end(), [&](const fs::path& k) {
        std::error_code kec;
        return !ec && at_or_beneath(fs::weakly_canonical(fs::absolute(k), kec), f);
      });
      if (!holds_kernel) kept += (kept.empty() ? "" : ":") + folder;
    }
    entry = name + "=" + kept;
  }
  return env;
}

}  // namespace

worker_outcome run_worker(const verify_options& o, const fs::path& dir, const std::vector<std::string>& env) {
  fs::path job = dir / "job.json";
  const handed_kernels handed = hand_kernels(o, dir);
  {
    std::ofstream out(job);
    // The worker may write only inside its scratch folder (Landlock), so compiled kernels are cached there, in the
    // one folder whose files may be loaded as code: a candidate must not be able to plant a library in the shared
    // cache that a later run would load unsandboxed.
    verify_options in_sandbox = o;
    if (in_sandbox.cache_dir.empty()) in_sandbox.cache_dir = sandbox::compiled_folder(dir);
    in_sandbox.reference.path = handed.reference;
    in_sandbox.candidate = handed.candidate;
    out << json::serialize(job_json(in_sandbox));
    if (!out) throw error(errc::internal, job.string() + ": cannot write the verify job");
  }
  fs::path worker = o.worker.empty() ? default_worker_path() : o.worker;
  if (worker.has_parent_path() && !fs::exists(worker)) {
    throw error(errc::not_found, "the verify worker " + worker.string() +
                                     " does not exist; build the "
                                     "rnx-verify-worker target or set RNX_VERIFY_WORKER");
  }
  if (!worker.has_parent_path()) {
    throw error(errc::not_found,
                "rnx-verify-worker was not found beside this program; build it or set RNX_VERIFY_WORKER");
  }
  // The worker must not read this process's environment (and its secrets) through /proc/PID/environ.
  ::prctl(PR_SET_DUMPABLE, 0);
  // An address-space limit breaks CUDA (the driver reserves huge virtual ranges): only where no GPU can be used.
  const auto device = device_kind_from_string(o.reference.device);
  const bool cpu_only =
      device == device_kind::cpu || (device == device_kind::automatic && !fs::exists("/dev/nvidiactl"));
  // The worker reads nothing of the host but the installed files (the system's, its own, the Python install) and
  // a kernel cache the caller named; the kernels and their helper modules are in its scratch (handed above).
  sandbox::sandbox_limits limits = o.limits;
  limits.confine_reads = true;
  if (!o.cache_dir.empty()) limits.readable.push_back(fs::absolute(o.cache_dir));
  sandbox::sandboxed_process p =
      sandbox::spawn_sandboxed({fs::absolute(worker).string(), "--job", job.string()},
                               without_kernel_folders(env, {o.reference.path, o.candidate}), dir, limits, cpu_only);
  worker_outcome w;
  w.address_space_limited = cpu_only;
  message_lines lines;  // the worker's stdout: the candidate's code runs in it
  const auto start = std::chrono::steady_clock::now();
  bool open = true;
  while (open) {
    pollfd pfd{p.read_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 100);
    if (ready > 0) {
      char chunk[8192];
      ssize_t n = ::read(p.read_fd, chunk, sizeof chunk);
      if (n > 0) {
        for (std::string& line : lines.feed(std::string_view(chunk, static_cast<std::size_t>(n)))) {
          try {
            bj::value v = json::parse(line, "verify worker output");
            show_paths_as_callers(v, handed.shown_as);
            if (v.is_object()) w.events.push_back(v.as_object());
          } catch (const std::exception&) {
            w.events.push_back(to_json(garbage_event{.line = line.substr(0, 200)}));
          }
        }
        if (lines.overflowed() && w.killed_for.empty()) w.killed_for = lines.overflow_reason();
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        open = false;
      }
    } else if (ready < 0 && errno != EINTR) {
      open = false;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (w.killed_for.empty() && elapsed > o.limits.wall_s) {
      w.killed_for = "it ran past the " + std::to_string(static_cast<int>(o.limits.wall_s)) + " s wall-clock limit";
    } else if (w.killed_for.empty() && sandbox::tree_memory_mb(p) > o.limits.memory_mb) {
      w.killed_for = "it used more than " + std::to_string(o.limits.memory_mb) + " MiB of memory";
    }
    if (!w.killed_for.empty()) {
      sandbox::kill_tree(p);
      ::kill(p.pid, SIGKILL);
      open = false;
    }
  }
  ::close(p.read_fd);
  // Anything it left behind in its process group or its cgroup is killed while the leader is a zombie not yet
  // reaped: its id, the group's, cannot have been given to another process by then.
  siginfo_t ended{};
  while (::waitid(P_PID, static_cast<id_t>(p.pid), &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  sandbox::kill_tree(p);
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) w.signal = WTERMSIG(status);
  if (WIFEXITED(status)) w.exit_code = WEXITSTATUS(status);
  return w;
}

}  // namespace rnx::verify::detail
