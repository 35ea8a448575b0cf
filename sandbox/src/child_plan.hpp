// The plan of the sandboxed child, built before fork (launch.cpp forks and follows it).
#pragma once

#include "detail.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <sys/resource.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rnx::sandbox::detail {

struct layer_lines {
  std::string ok;
  std::string missing;
};

// Everything the sandboxed child needs, built before fork: after fork only async-signal-safe calls are allowed, so
// the child formats nothing and allocates nothing. Built in place (its pointers point into its own strings).
struct child_plan {
  std::vector<std::string> args;
  std::vector<char*> c_args;
  std::vector<std::string> env;
  std::vector<char*> c_env;
  bool root = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::string uid_map;
  std::string gid_map;
  std::string dir;
  std::string scratch_options;
  std::string compiled_dir;  // compiled_folder(dir)
  std::string handed_dir;    // handed_folder(dir)
  bool handed = false;       // the caller handed files (handed_dir exists): shown read-only inside scratch
  std::string compiled_options;
  std::string shm_options;
  std::string cpu_line;
  std::string root_line;
  std::string none_line;
  // The child fills in the Landlock ABI (one digit) without formatting.
  std::string fs_ok_line;
  std::size_t abi_digit_1 = 0;
  std::size_t abi_digit_2 = 0;
  std::string fs_none_line;
  std::string proc_ok_line;
  std::string proc_none_line;
  layer_lines user_lines;
  layer_lines host_files_lines;
  layer_lines session_lines;
  layer_lines proc_sys_lines;
  layer_lines dev_lines;
  layer_lines scratch_lines;
  layer_lines tasks_lines;
  rlim_t cpu = 0;
  rlim_t memory = 0;
  rlim_t file = 0;
  rlim_t nproc = 0;
  bool limit_address_space = false;
  reveal_plan reveal;  // started as root: the folders nobody may enter covered, what the worker needs shown
  file_rules rules;    // Landlock: writes, execution and (confine_reads) reads
  // This process's command line in memory: PID 1 of the namespace (a copy of it) blanks it, so that the worker
  // reading /proc/1/cmdline does not find the caller's arguments.
  char* command_line = nullptr;
  std::size_t command_line_size = 0;

  child_plan(const std::vector<std::string>& argv, const std::vector<std::string>& environment,
             const std::filesystem::path& workdir, const sandbox_limits& limits, bool limit_as);
  child_plan(const child_plan&) = delete;
  child_plan& operator=(const child_plan&) = delete;
};

}  // namespace rnx::sandbox::detail
