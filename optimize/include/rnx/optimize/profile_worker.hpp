// Profiling in a child process (rnx-profile-worker holds libtorch and Python; the rnx CLI stays torch-free, and
// a kernel that crashes takes only the worker down).
#pragma once

#include "rnx/optimize/profile.hpp"
#include "rnx/optimize/profile_kernel.hpp"

#include "rnx/common/process.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace rnx::optimize {

// $RNX_PROFILE_WORKER, else rnx-profile-worker beside the running executable, else on PATH.
std::filesystem::path default_profile_worker_path();

// The worker's command line for kernel `kernel` of the manifest (mark-window appended where the options ask), and
// how it is started: the kernel's environment without the job's credentials (less [bench] pass_env), no bytecode
// written into the user's tree. rnx explain starts the same command under Nsight Compute.
std::vector<std::string> profile_worker_argv(const std::filesystem::path& manifest_path, const std::string& kernel,
                                             const profile_options& options, const std::filesystem::path& worker = {});
process_options profile_worker_process(const std::filesystem::path& manifest_path, std::chrono::seconds timeout);

// Runs the worker on kernel `kernel` of the manifest; its errors come back as the same rnx::error kinds.
op_profile profile_in_worker(const std::filesystem::path& manifest_path, const std::string& kernel,
                             const profile_options& options, std::chrono::seconds timeout = std::chrono::seconds(600),
                             const std::filesystem::path& worker = {});

}  // namespace rnx::optimize
