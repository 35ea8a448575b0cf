// Small POSIX process helpers shared by the native-kernel build and the worker orchestration.
#pragma once

#include <string>
#include <vector>

namespace rnx::runner::detail {

// Runs argv (PATH lookup), capturing stdout and stderr together into `output`; returns the exit status
// (128 + signal when killed). Throws rnx::error(internal) only when the process cannot be started.
int run_capture(const std::vector<std::string>& argv, std::string& output);

// "Segmentation fault" for SIGSEGV and so on.
std::string signal_name(int signal_number);

}  // namespace rnx::runner::detail
