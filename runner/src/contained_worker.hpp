// What the orchestrator needs to start a worker inside rnx::sandbox (untrusted kernels: rnx optimize's
// candidates): a scratch folder of its own that is always removed, the sandboxed launch, and the check that every
// layer of the containment was applied before the worker may run a kernel.
#pragma once

#include "rnx/sandbox/sandbox.hpp"

#include <boost/json/object.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::runner::detail {

// The flag the orchestrator passes to a contained worker (`--contained 1`: a pair, as the worker's other
// arguments are) and the log the worker then writes its stdout and stderr to, in its scratch folder.
inline constexpr const char* contained_flag = "--contained";
inline constexpr const char* contained_log = "worker.log";

// The prefix of a contained worker's scratch folder (an rnx::sandbox::scratch_folder under $TMPDIR).
inline constexpr const char* scratch_prefix = "rnx-bench-";

// Starts `worker` on `job_path` inside the sandbox with `scratch` as its working, home and temporary folder and
// the allow-listed environment. Returns the process and its result pipe (the sandbox's own lines come first).
sandbox::sandboxed_process spawn_contained_worker(const std::filesystem::path& worker,
                                                  const std::filesystem::path& job_path,
                                                  const std::filesystem::path& scratch,
                                                  const sandbox::sandbox_limits& limits);

// The layers a contained worker reported: the launch's lines ("sandbox", "sandbox_proc", "sandbox_fs", and every
// "sandbox_layer" through rnx::sandbox::layer_report) and the worker's own ("contained": seccomp filter and
// capabilities).
class containment_check {
 public:
  // Takes one event from the worker's result pipe; returns true when it was one of the containment's lines
  // (which go no further than here).
  bool read(const boost::json::object& event);
  // What was not applied ("no network namespace (...)", ...); empty when every layer was.
  std::vector<std::string> missing() const;

 private:
  bool network_namespace_ = false;
  std::string network_ = "unknown (the worker said nothing)";
  bool own_processes_ = false;
  std::string processes_ = "unknown (the worker said nothing)";
  int landlock_ = -1;
  std::string files_ = "unknown (the worker said nothing)";
  bool sealed_ = false;
  std::string seal_why_ = "the worker did not report its filter";
  sandbox::layer_report layers_;
};

}  // namespace rnx::runner::detail
