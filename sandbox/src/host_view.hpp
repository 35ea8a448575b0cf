// What of the host a sandboxed worker may read and run, planned before fork (host_view.cpp).
#pragma once

#include "rnx/sandbox/sandbox.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace rnx::sandbox::detail {

struct shown_path {
  std::filesystem::path path;
  bool folder = true;  // else a file
};

struct host_view {
  std::vector<std::filesystem::path> programs;  // program_folders(): read and executed
  std::vector<std::filesystem::path> readable;  // the caller's (the job's files): read only
  // bin/ of the Python install the worker's libpython belongs to (empty if none): first on the worker's PATH, so that
  // an embedded interpreter, which finds its prefix through `python3` on PATH, finds this install and not another
  // python3 further on (a pyenv shim folder is not shown), and python3 in a subprocess is the same install.
  std::filesystem::path python_bin;
  // Started as root, the worker runs as nobody, who may not enter a folder such as /root (mode 700): each such
  // folder above what it needs is covered by an empty tmpfs, `skeleton`'s folders are made in it (parents first)
  // and each of `shown` is bind-mounted back, read-only. Nothing else of the covered folder is there.
  std::vector<std::filesystem::path> covers;
  std::vector<std::filesystem::path> skeleton;
  std::vector<shown_path> shown;
};

// `cover_closed`: plan covers (the caller is root and the worker will not be).
host_view plan_host_view(const std::filesystem::path& program, const std::vector<std::string>& env,
                         const std::vector<std::filesystem::path>& readable, const std::filesystem::path& scratch,
                         bool cover_closed);

}  // namespace rnx::sandbox::detail
