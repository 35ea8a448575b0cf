// Running a child process with stdin text, captured stdout/stderr and a deadline (rewriter commands, git).
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rnx::optimize {

struct process_result {
  int exit_code = -1;      // -1 when killed by a signal or the deadline
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
};

struct process_options {
  std::filesystem::path cwd;                     // empty = the current folder
  std::map<std::string, std::string> env_set;    // added to / replacing the inherited environment
  std::string input;                             // written to the child's stdin, then closed
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::size_t max_output = 32u << 20;            // bytes kept of each stream
};

// argv[0] is looked up on PATH when it has no '/'. A program that cannot start throws
// rnx::error(not_found) naming it; a non-zero exit is reported in the result, not thrown.
process_result run_process(const std::vector<std::string>& argv, const process_options& options = {});

}  // namespace rnx::optimize
