// Profiling one kernel configuration in this process through libtorch's profiler (Kineto).
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/optimize/profile.hpp"

#include <cstdint>
#include <string>

namespace rnx::optimize {

struct profile_options {
  std::string runtime = "eager";
  std::string dtype;       // empty = the kernel's first dtype
  std::int64_t batch = 0;  // 0 = the kernel's largest batch
  std::string device;      // empty = the kernel's device (auto | cpu | cuda:N)
  int warmup_calls = 3;
  int calls = 10;  // calls inside the profiled window
  // No profiler in this process: the window is only marked for an outside one (cudaProfilerStart/Stop on a GPU,
  // which Nsight Compute's --profile-from-start off honours), and the profile returned has no rows.
  bool mark_window_only = false;
};

// Loads the kernel with the runner, warms it up, and records `calls` calls with the profiler on: host operators
// always, CUDA kernels too on a GPU. Throws rnx::error(kernel_failed) when the kernel fails, errc::usage for an
// unavailable runtime or device (naming it).
op_profile profile_kernel(const kernel_spec& spec, const profile_options& options);

}  // namespace rnx::optimize
