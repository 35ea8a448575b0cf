// The one way rnx starts a short helper program and reads what it printed: argv only, never a shell string, so
// no argument (a git ref, a path) can be read as shell syntax.
//
//   std::string out;
//   int status = rnx::run_capture({"git", "-C", repo, "rev-parse", ref}, out, rnx::capture::stdout_only);
#pragma once

#include <string>
#include <vector>

namespace rnx {

enum class capture { stdout_and_stderr, stdout_only };

// Runs argv (PATH lookup) with LC_ALL=C, capturing its stdout (and stderr, unless stdout_only: then stderr goes to
// /dev/null) into `output`; returns the exit status (128 + signal when killed, 127 when it cannot be executed).
// Throws rnx::error(internal) only when the process cannot be started.
int run_capture(const std::vector<std::string>& argv, std::string& output,
                capture what = capture::stdout_and_stderr);

// "Segmentation fault" for SIGSEGV and so on.
std::string signal_name(int signal_number);

}  // namespace rnx
