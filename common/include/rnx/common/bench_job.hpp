// What `rnx gate` hands its `rnx bench` child: one typed document, rnx.bench-job/v1, written by the gate and read
// by `rnx bench --job FILE`. Both sides use this type (described once, rnx/common/described_json.hpp), so a field
// cannot be written one way and read another, and the resolved policy arrives to the bit (a double travels as
// the shortest text that reads back as it).
#pragma once

#include <boost/describe.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnx {

inline constexpr const char* bench_job_schema = "rnx.bench-job/v1";

struct bench_job {
  std::string schema = bench_job_schema;
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
  std::string shard;                  // "K/N": only this shard of the suite; "" = all
  std::string run_group;              // with shard: the run group ("" = rnx bench's default from GitHub's environment)
};
BOOST_DESCRIBE_STRUCT(bench_job, (),
                      (schema, config, out, pair_ref, base_out, kernels, runtimes, dtypes, batches, quiet, processes,
                       max_processes, budget_ms, rope, probability, shard, run_group))

// Written atomically (a temporary file renamed into place); throws rnx::error naming the path.
void write_bench_job(const bench_job& job, const std::string& path);

// Throws rnx::error: not_found for a missing file, invalid naming the path and the key at fault (an unknown key,
// a value of the wrong type, another schema).
bench_job read_bench_job(const std::string& path);

}  // namespace rnx
