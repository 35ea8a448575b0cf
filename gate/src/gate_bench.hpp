// Runs `rnx bench` as a child process of the gate and reads the run documents it writes.
#pragma once

#include "rnx/common/bench_job.hpp"
#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

// What the child is asked to run: the typed job both sides read (rnx/common/bench_job.hpp).
using bench_request = bench_job;

struct bench_outcome {
  run_document head;
  std::optional<run_document> base;  // paired mode
};

// The benchmark runs in a child process (this same executable's `bench` subcommand) so that a kernel
// that crashes the interpreter or leaks GPU memory cannot take the gate's reporting down with it.
// A child that exits 2 is the user's configuration problem (errc::invalid, exit 2); a child that dies
// without writing its run document is errc::kernel_failed.
bench_outcome run_bench(const bench_request& request);

// Where the child's job file goes: beside the head run document (run.json -> run.job.json).
std::string bench_job_path(const bench_request& request);

// argv of the child: this executable's `bench --job JOB_PATH`.
std::vector<std::string> bench_arguments(const std::string& job_path);

// The path of the running executable (/proc/self/exe).
std::string self_executable();

}  // namespace rnx::gate
