// Profiling in a child process (rnx-profile-worker holds libtorch and Python; the rnx CLI stays torch-free, and
// a kernel that crashes takes only the worker down).
#pragma once

#include "rnx/optimize/profile.hpp"
#include "rnx/optimize/profile_kernel.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace rnx::optimize {

// $RNX_PROFILE_WORKER, else rnx-profile-worker beside the running executable, else on PATH.
std::filesystem::path default_profile_worker_path();

// Runs the worker on kernel `kernel` of the manifest; its errors come back as the same rnx::error kinds.
op_profile profile_in_worker(const std::filesystem::path& manifest_path, const std::string& kernel,
                             const profile_options& options, std::chrono::seconds timeout = std::chrono::seconds(600),
                             const std::filesystem::path& worker = {});

}  // namespace rnx::optimize
