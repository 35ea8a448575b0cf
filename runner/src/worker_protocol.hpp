// The job a worker process runs and the events it reports back, as JSON (shared by orchestrator and worker).
#pragma once

#include <boost/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnx::runner::detail {

struct job_config {
  std::size_t index = 0;  // position in the orchestrator's plan, echoed in events
  std::string kernel;
  std::string runtime;
  std::string dtype;
  std::int64_t batch = 1;
  bool check = true;      // run the float64 reference check (first process of a configuration only)
  // In-process pairing: the same configuration of the base manifest, measured alternately with this one.
  std::optional<std::size_t> base_index;
  bool check_base = true;
  // Paired: which side is loaded, given inputs and bound first in this process. The orchestrator alternates it
  // across processes, so whatever the first side gets (an import, a memory placement) falls on both alike.
  bool base_first = true;
  // This process's share of the configuration's budget (sequential looks extend it); unset = the manifest's.
  std::optional<double> budget_ms;
  std::optional<int> max_samples;
};

struct job_overrides {
  std::optional<int> min_samples;
  std::optional<int> max_samples;
  std::optional<double> budget_ms;
  std::optional<double> warmup_ms;
};

struct worker_job {
  std::string manifest;   // absolute path of the rnx.toml the worker reads its kernels from
  std::string base_manifest;  // paired jobs: the base revision's rnx.toml (its kernels load under other names)
  std::uint64_t pairing_seed = 0;  // paired jobs: the ABBA/BAAB order of each block comes from this
  std::string cuda_arch;
  std::string cache_dir;
  std::string fingerprint_device = "auto";
  std::string device_override;  // --device, or the device lane's: replaces every kernel's device
  // A CPU device lane (`--devices cpu:0-1,...`): the cores this worker and its threads may run on; its threads
  // are capped at their number. Empty: whatever the orchestrator was allowed.
  std::vector<int> cores;
  job_overrides overrides;
  std::vector<job_config> configs;
};

boost::json::value to_json(const worker_job& job);
worker_job job_from_json(const boost::json::value& v);

}  // namespace rnx::runner::detail
