// One worker process as the orchestrator sees it: started on a job file, its result lines and log read until it
// exits, killed with its whole process group on a timeout.
#pragma once

#include "contained_worker.hpp"
#include "rnx/common/message_lines.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rnx::runner::detail {

// One worker process: started on a job, read until it exits or is killed for a timeout. With `contain` it starts
// inside rnx::sandbox in a scratch folder of its own (removed when this ends), its output goes to a log there,
// and it is killed before it reads a kernel when a layer of the containment is missing (unless the limits allow
// a weaker sandbox): its result lines then stop and log_tail() says what was missing.
//
// `cores` (a CPU device lane's set; empty for none) binds the process before it execs the worker, so its start
// (the embedded Python, `import torch`) runs on its own lane and never on a core where another lane measures.
class worker_run {
 public:
  //
  // `withheld` (rnx::kernel_withheld_variables: the job's credentials, less the manifest's [bench] pass_env) are
  // removed from the environment an uncontained worker inherits; a contained one gets the sandbox's allow-list.
  worker_run(const std::filesystem::path& worker, const std::filesystem::path& job_path,
             const std::optional<sandbox::sandbox_limits>& contain = std::nullopt, const std::vector<int>& cores = {},
             const std::vector<std::string>& withheld = {});
  // A prestarted worker (`--job -`): it starts Python and imports torch now, reports "loaded", and waits
  // (touching no device) until release() hands it its job.
  worker_run(const std::filesystem::path& worker, const std::vector<int>& cores,
             const std::vector<std::string>& withheld = {});
  void release(const std::filesystem::path& job_path);
  ~worker_run();
  worker_run(const worker_run&) = delete;
  worker_run& operator=(const worker_run&) = delete;

  // Waits up to `timeout_ms` for output; returns complete result lines. Sets finished() at end of output.
  std::vector<std::string> poll_lines(int timeout_ms);
  bool finished() const { return result_fd_ < 0 && log_fd_ < 0; }
  void kill();
  // Reaps the process; describes how it ended ("exit 0", "killed by signal 11 (Segmentation fault)").
  std::string wait_description(bool& clean);
  std::string log_tail() const;

 private:
  void start(const std::filesystem::path& worker, const std::string& job_arg, bool held, const std::vector<int>& cores,
             const std::vector<std::string>& withheld);
  void start_contained(const std::filesystem::path& worker, const std::filesystem::path& job_path,
                       const sandbox::sandbox_limits& limits);
  // A contained worker's line: false when it goes no further (a containment line, or anything after a failed
  // check).
  bool admit(const std::string& line);
  void read_contained_log();

  std::unique_ptr<sandbox::scratch_folder> scratch_;  // set for a contained worker
  std::unique_ptr<sandbox::tree_cgroup> cgroup_;      // a contained worker's memory cgroup, where there is one
  bool allow_weaker_ = false;
  containment_check layers_;
  std::string refused_;  // why a contained worker was stopped before it ran a kernel
  pid_t pid_ = -1;
  bool reaped_ = false;
  int result_fd_ = -1;
  int log_fd_ = -1;
  int job_fd_ = -1;        // a prestarted worker's stdin, where its job's path goes
  message_lines results_;  // the result pipe's lines; overflowed() when the worker was stopped for a flood
  std::string log_;
};

}  // namespace rnx::runner::detail
