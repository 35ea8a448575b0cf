// Runs `rnx bench` as a child process of the gate and reads the run documents it writes.
#pragma once

#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

struct bench_request {
  std::string config;                 // rnx.toml
  std::string out;                    // head run document
  std::string pair_ref;               // paired mode: the base revision; "" = head only
  std::string base_out;               // paired mode: the base run document
  std::vector<std::string> kernels;   // only these kernels of the manifest; empty = all
  std::vector<std::string> runtimes;  // only these runtimes, dtypes, batches; empty = all
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
  bool quiet = false;            // no progress or summary from the child
  std::optional<int> processes;  // worker processes of the first look, and the most the looks may add
  std::optional<int> max_processes;
  std::optional<double> budget_ms;    // timed budget per configuration and process
  std::optional<double> rope;         // paired mode: the band and probability of the sequential looks, when the
  std::optional<double> probability;  // gate's resolved policy is not the manifest's own
  std::string shard;                  // "K/N": only this shard of the suite (rnx bench --shard); "" = all
  std::string run_group;              // with shard: the run group ("" = rnx bench's default from GitHub's environment)
};

struct bench_outcome {
  run_document head;
  std::optional<run_document> base;  // paired mode
};

// The benchmark runs in a child process (this same executable's `bench` subcommand) so that a kernel
// that crashes the interpreter or leaks GPU memory cannot take the gate's reporting down with it.
// A child that exits 2 is the user's configuration problem (errc::invalid, exit 2); a child that dies
// without writing its run document is errc::kernel_failed.
bench_outcome run_bench(const bench_request& request);

// argv of the child, for messages and tests.
std::vector<std::string> bench_arguments(const bench_request& request);

// The path of the running executable (/proc/self/exe).
std::string self_executable();

}  // namespace rnx::gate
