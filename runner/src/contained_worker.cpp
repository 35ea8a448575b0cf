// Starting a benchmark worker inside rnx::sandbox, and checking that it is contained before it runs a kernel.
#include "contained_worker.hpp"

#include "worker_protocol.hpp"

#include "rnx/common/described_json.hpp"
#include "rnx/common/error.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

namespace rnx::runner::detail {

namespace fs = std::filesystem;
namespace bj = boost::json;

namespace {

// execve needs a path: a worker named without a folder is looked up on PATH, as execvp would.
fs::path resolve_program(const fs::path& program) {
  if (program.has_parent_path()) return fs::absolute(program);
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate);
  }
  throw error(errc::not_found, program.string() +
                                   " was not found beside this program or on PATH; build the "
                                   "rnx-runner-worker target or set RNX_WORKER");
}

std::string string_field(const bj::object& o, const char* key) {
  const bj::value* v = o.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

}  // namespace

sandbox::sandboxed_process spawn_contained_worker(const fs::path& worker, const fs::path& job_path,
                                                  const fs::path& scratch, const sandbox::sandbox_limits& limits) {
  sandbox::sandbox_limits l = limits;
  // Not secrets: the worker's core pinning switch, and no bytecode caches (they could not be written anyway).
  for (const char* name : {"RNX_PIN", "PYTHONDONTWRITEBYTECODE"}) l.keep_env.push_back(name);
  const std::vector<std::string> env = sandbox::sandbox_environment(l, scratch, nullptr);
  // Without its own process namespace the worker could read this process's environment through /proc.
  ::prctl(PR_SET_DUMPABLE, 0);
  // An address-space limit breaks CUDA (the driver reserves huge virtual ranges): only where there is no GPU.
  const bool cpu_only = !fs::exists("/dev/nvidiactl");
  return sandbox::spawn_sandboxed({resolve_program(worker).string(), "--job", job_path.string(), contained_flag, "1"},
                                  env, scratch, l, cpu_only);
}

bool containment_check::read(const bj::object& event) {
  if (layers_.read(event)) return true;
  const std::string kind = string_field(event, "event");
  const auto launch = sandbox::launch_event_from_string(kind);
  if (launch == sandbox::launch_event::sandbox) {
    network_namespace_ =
        sandbox::network_cut_from_string(string_field(event, "network")) == sandbox::network_cut::own_namespace;
    network_ = string_field(event, "how");
  } else if (launch == sandbox::launch_event::sandbox_proc) {
    const bj::value* own = event.if_contains("own");
    own_processes_ = own && own->is_bool() && own->as_bool();
    processes_ = string_field(event, "how");
  } else if (launch == sandbox::launch_event::sandbox_fs) {
    const bj::value* abi = event.if_contains("landlock");
    landlock_ = abi && abi->is_int64() ? static_cast<int>(abi->as_int64()) : 0;
    files_ = string_field(event, "how");
  } else if (worker_line_from_string(kind) == worker_line::contained) {
    // Unreadable counts as not sealed: the run is refused unless a weaker containment was accepted.
    try {
      const auto contained = json::from_object<contained_event>(event, "the worker's \"contained\" line");
      sealed_ = contained.seccomp;
      seal_why_ = contained.why;
    } catch (const error& e) {
      sealed_ = false;
      seal_why_ = e.what();
    }
  } else {
    // The sandbox's other lines (its newer layers) are its own business, not the orchestrator's.
    return kind.rfind("sandbox", 0) == 0;
  }
  return true;
}

std::vector<std::string> containment_check::missing() const {
  std::vector<std::string> out;
  if (!network_namespace_) out.push_back("no network namespace (" + network_ + ")");
  if (landlock_ <= 0) out.push_back("no filesystem confinement (" + files_ + ")");
  if (!own_processes_) out.push_back("no process isolation (" + processes_ + ")");
  if (!sealed_) out.push_back("no seccomp filter (" + seal_why_ + ")");
  for (auto& m : layers_.missing()) out.push_back(std::move(m));
  return out;
}

}  // namespace rnx::runner::detail
