// One worker process as the orchestrator sees it: started on a job file, its result lines and log read until it
// exits, killed with its whole process group on a timeout.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::runner::detail {

// One worker process: started on a job, read until it exits or is killed for a timeout.
class worker_run {
 public:
  worker_run(const std::filesystem::path& worker, const std::filesystem::path& job_path);
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
  pid_t pid_ = -1;
  bool reaped_ = false;
  int result_fd_ = -1;
  int log_fd_ = -1;
  std::string pending_;
  std::string log_;
};

}  // namespace rnx::runner::detail
