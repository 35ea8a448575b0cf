// The candidate as the judge sees it: a kernel in another process (this binary started with --candidate-host),
// reached over two pipes. The judge holds the reference, the inputs, the comparisons and the result channel;
// the candidate's process holds only the candidate (and the reference again, trusted, to warm torch's pools the
// same way), so no check's outcome is computed by code the candidate can write to.
#pragma once

#include "device_checks.hpp"
#include "rnx/sandbox/sandbox.hpp"
#include "rnx/verify/verify.hpp"
#include "worker_kernels.hpp"

#include <ATen/ATen.h>

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rnx::verify::detail {

// What the candidate's process saw during the last call, about memory only it can see.
struct call_notes {
  std::vector<std::pair<int, int>> shares_input;  // (output, input) pairs backed by the same memory
  std::vector<int> reuses_previous;               // outputs held in memory a previous call's output still holds
  std::string parameters;  // what the call's instance has of perturbed parameters (verify_kernel::parameters_note)
};

// The candidate's process's last word: its seccomp filters, what they refused, its write attempts outside the
// scratch folder, and its Python thread count.
struct host_report {
  bool sealed = false;
  std::string why;
  sandbox::blocked_counts blocked;
  std::int64_t writes_outside = 0;
  std::string first_write;
  int python_threads = 0;
};

class remote_candidate final : public verify_kernel {
 public:
  // Starts the candidate's process on `job_path` and waits until it has warmed up (reference run, candidate not
  // yet imported). Throws rnx::error(internal) when it cannot start.
  remote_candidate(const std::filesystem::path& job_path, at::Device device);
  ~remote_candidate() override;
  remote_candidate(const remote_candidate&) = delete;
  remote_candidate& operator=(const remote_candidate&) = delete;

  // Imports the candidate there (behind its seccomp filter). Returns the error when it does not load.
  std::string load();

  // Calls the candidate on `inputs`; afterwards each input holds what the call left in it (so a caller comparing
  // it with a copy sees mutations) and the outputs are on the device the candidate put them on (this process's
  // device when that was a GPU). Throws rnx::error(kernel_failed) when the candidate raises or its process fails.
  std::vector<at::Tensor> call(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                               const shape_variant& shape) override;
  runner::kernel_form kind() const override { return kind_; }
  const call_notes& last_notes() const { return notes_; }

  // Device checks run there, where the candidate's streams are: hidden work, and the fastest of `repetitions`
  // device-synchronized calls after a warm-up, timed by the host clock (milliseconds).
  hidden_work_result hidden_work(const std::vector<at::Tensor>& inputs, at::ScalarType dtype,
                                 const shape_variant& shape, int calls);
  double fastest_call_ms(const std::vector<at::Tensor>& inputs, at::ScalarType dtype, const shape_variant& shape,
                         int repetitions);
  // Timing on fresh inputs: `sets[0]` warms up, each of sets[1 .. n-2] gets one timed call, then set n-1's values
  // are written into set 1's memory and called once more. outputs[k] holds timed call k's outputs (k < n-2) and
  // outputs.back() the rewritten call's. Needs at least three sets of equal size.
  struct fresh_timing {
    double fastest_ms = 0;
    std::vector<double> ms;
    std::vector<std::vector<at::Tensor>> outputs;
  };
  fresh_timing time_fresh(const std::vector<std::vector<at::Tensor>>& sets, at::ScalarType dtype,
                          const shape_variant& shape);

  // Globals the candidate changed (and that were restored), each with when: at import, during a call, ...
  const std::vector<std::string>& patched() const { return patched_; }
  int python_threads_before() const { return python_threads_before_; }
  const candidate_costs& costs() const { return costs_; }
  // Threads of the candidate's process, counted here from /proc.
  int native_threads() const;
  pid_t pid() const { return pid_; }
  // Ends the candidate's process after its report. Throws rnx::error(kernel_failed) when it is already gone.
  host_report finish();
  // Empty while the process runs; otherwise how it ended.
  std::string ended() const;
  // The signal that ended the process on its own (0 while it runs, or when it exited or was ended here).
  int signal() const { return signal_; }
  // Its seccomp filters as it reported them once the candidate was imported (for a process that ends early).
  bool sealed_at_load() const { return sealed_at_load_; }
  const std::string& why_at_load() const { return why_at_load_; }

 private:
  struct reply {
    boost::json::object header;
    std::vector<at::Tensor> tensors;
  };
  reply request(boost::json::object header, const std::vector<at::Tensor>& tensors);
  void note_patched(const boost::json::object& header);
  void note_call_seconds(double seconds);
  void fail_if_gone() const;
  [[noreturn]] void abandon(const std::string& why);

  at::Device device_;
  pid_t pid_ = -1;
  int to_host_ = -1;
  int from_host_ = -1;
  runner::kernel_form kind_ = runner::kernel_form::function;  // until the candidate's process says
  std::string gone_;  // set once the process failed: every later request fails the same way
  call_notes notes_;
  std::vector<std::string> patched_;
  int python_threads_before_ = 0;
  candidate_costs costs_;
  int signal_ = 0;
  bool sealed_at_load_ = false;
  std::string why_at_load_;
};

// The candidate's side: `rnx-verify-worker --candidate-host --job JOB --channel IN,OUT`. Never returns.
[[noreturn]] void run_candidate_host(const std::filesystem::path& job_path, int in_fd, int out_fd);

}  // namespace rnx::verify::detail
