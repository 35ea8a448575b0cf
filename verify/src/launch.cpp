// The verify worker's launch: its job file, the sandboxed process, its result lines read until it ends or is
// killed for the wall-clock or memory limit.
#include "orchestrator.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json.hpp>

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>

namespace bj = boost::json;
namespace fs = std::filesystem;

namespace rnx::verify::detail {

namespace {

bj::object job_json(const verify_options& o) {
  bj::array inputs;
  for (const auto& in : o.reference.inputs) inputs.push_back(bj::object{{"name", in.name}, {"shape", in.text}});
  bj::array batches;
  for (auto b : o.reference.batches) batches.push_back(b);
  bj::array dtypes;
  for (const auto& d : o.reference.dtypes) dtypes.push_back(bj::string(d));
  bj::object tolerances;
  for (const auto& [d, t] : o.reference.tolerances) tolerances[d] = bj::object{{"rtol", t.rtol}, {"atol", t.atol}};
  return bj::object{
      {"name", o.reference.name},
      {"reference", bj::object{{"path", fs::absolute(o.reference.path).string()}, {"entry", o.reference.entry}}},
      {"candidate", bj::object{{"path", fs::absolute(o.candidate).string()}, {"entry", o.candidate_entry}}},
      {"inputs", inputs},
      {"batches", batches},
      {"dtypes", dtypes},
      {"device", o.reference.device},
      {"tolerances", tolerances},
      {"seed", static_cast<std::int64_t>(o.seed & 0x7fffffffffffffffULL)},
      {"speedup_limit", o.speedup_limit},
      {"implausible_speedup", o.speedup_review ? "review" : "reject"},
      {"cache_dir", o.cache_dir.string()},
  };
}

}  // namespace

worker_outcome run_worker(const verify_options& o, const fs::path& dir, const std::vector<std::string>& env) {
  fs::path job = dir / "job.json";
  {
    std::ofstream out(job);
    // The worker may write only inside its scratch folder (Landlock), so compiled kernels are cached there, in the
    // one folder whose files may be loaded as code: a candidate must not be able to plant a library in the shared
    // cache that a later run would load unsandboxed.
    verify_options with_cache = o;
    if (with_cache.cache_dir.empty()) with_cache.cache_dir = sandbox::compiled_folder(dir);
    out << json::serialize(job_json(with_cache));
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
  // The worker reads nothing of the host but the installed files and the job's: the two kernels, the folders of
  // their helper modules (each file's folder is on sys.path) and a kernel cache the caller named.
  sandbox::sandbox_limits limits = o.limits;
  limits.confine_reads = true;
  for (const fs::path& kernel : {o.reference.path, o.candidate}) {
    limits.readable.push_back(fs::absolute(kernel));
    limits.readable.push_back(fs::absolute(kernel).parent_path());
  }
  if (!o.cache_dir.empty()) limits.readable.push_back(fs::absolute(o.cache_dir));
  sandbox::sandboxed_process p =
      sandbox::spawn_sandboxed({fs::absolute(worker).string(), "--job", job.string()}, env, dir, limits, cpu_only);
  worker_outcome w;
  w.address_space_limited = cpu_only;
  std::string buffer;
  const auto start = std::chrono::steady_clock::now();
  bool open = true;
  while (open) {
    pollfd pfd{p.read_fd, POLLIN, 0};
    int ready = ::poll(&pfd, 1, 100);
    if (ready > 0) {
      char chunk[8192];
      ssize_t n = ::read(p.read_fd, chunk, sizeof chunk);
      if (n > 0) {
        buffer.append(chunk, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = buffer.find('\n')) != std::string::npos) {
          std::string line = buffer.substr(0, nl);
          buffer.erase(0, nl + 1);
          try {
            bj::value v = json::parse(line, "verify worker output");
            if (v.is_object()) w.events.push_back(v.as_object());
          } catch (const std::exception&) {
            const std::string_view garbage = to_string(worker_event::garbage);
            w.events.push_back(bj::object{{"event", garbage}, {"line", line.substr(0, 200)}});
          }
        }
        if (buffer.size() > (1 << 20)) buffer.clear();  // a flood of unterminated output is dropped, not kept
      } else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        open = false;
      }
    } else if (ready < 0 && errno != EINTR) {
      open = false;
    }
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (w.killed_for.empty() && elapsed > o.limits.wall_s) {
      w.killed_for = "it ran past the " + std::to_string(static_cast<int>(o.limits.wall_s)) + " s wall-clock limit";
    } else if (w.killed_for.empty() && sandbox::resident_mb(p.pid) > o.limits.memory_mb) {
      w.killed_for = "it used more than " + std::to_string(o.limits.memory_mb) + " MiB of memory";
    }
    if (!w.killed_for.empty()) {
      ::kill(-p.pid, SIGKILL);
      ::kill(p.pid, SIGKILL);
      open = false;
    }
  }
  ::close(p.read_fd);
  int status = 0;
  while (::waitpid(p.pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::kill(-p.pid, SIGKILL);  // anything it left behind in its process group
  if (WIFSIGNALED(status)) w.signal = WTERMSIG(status);
  if (WIFEXITED(status)) w.exit_code = WEXITSTATUS(status);
  return w;
}

}  // namespace rnx::verify::detail
