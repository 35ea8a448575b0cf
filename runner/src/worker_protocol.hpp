// The job a worker process runs and the events it reports back, as JSON (shared by orchestrator and worker).
#pragma once

#include <boost/describe.hpp>
#include <boost/json.hpp>

#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rnx {
BOOST_DESCRIBE_STRUCT(tolerance, (), (rtol, atol))
}  // namespace rnx

namespace rnx::runner::detail {

// The "event" names of the lines a worker writes on its result pipe (the sandbox's launch lines come before them):
// loaded (Python and the kernels' modules are in), contained (its own seccomp filter), log (a contained worker's
// log line), ready (its environment), start and result (per configuration).
enum class worker_line { loaded, contained, log, ready, start, result };
std::string_view to_string(worker_line l);
std::optional<worker_line> worker_line_from_string(std::string_view name);

struct job_config {
  std::size_t index = 0;  // position in the orchestrator's plan, echoed in events
  std::string kernel;
  std::string runtime;
  std::string dtype;
  std::int64_t batch = 1;
  bool check = true;  // run the float64 reference check (first process of a configuration only)
  // In-process pairing: the same configuration of the base manifest, measured alternately with this one.
  std::optional<std::size_t> base_index;
  bool check_base = true;
  // Paired: which side is loaded, given inputs and bound first in this process. The orchestrator alternates it
  // across processes, so whatever the first side gets (an import, a memory placement) falls on both alike.
  bool base_first = true;
  // Paired, base first: time the base alone before the head is imported (the control; worker_config.cpp).
  bool control_base = false;
  // This process's share of the configuration's budget (sequential looks extend it); unset = the manifest's.
  std::optional<double> budget_ms;
  std::optional<int> max_samples;
  // The tolerance the reference check applied to each side (set once a process has checked it): what the audited
  // timed calls of later processes are held to (timed_calls.hpp, audited_calls).
  std::optional<tolerance> tol;
  std::optional<tolerance> base_tol;
};

struct job_overrides {
  std::optional<int> min_samples;
  std::optional<int> max_samples;
  std::optional<double> budget_ms;
  std::optional<double> warmup_ms;
};

struct worker_job {
  std::string manifest;            // absolute path of the rnx.toml the worker reads its kernels from
  std::string base_manifest;       // paired jobs: the base revision's rnx.toml (its kernels load under other names)
  std::uint64_t pairing_seed = 0;  // paired jobs: the ABBA/BAAB order of each block comes from this
  std::string cuda_arch;
  std::string cache_dir;
  std::string fingerprint_device = "auto";
  std::string device_override;  // --device, or the device lane's: replaces every kernel's device
  // A CPU device lane (`--devices cpu:0-1,...`): the cores this worker and its threads may run on; its threads
  // are capped at their number. Empty: whatever the orchestrator was allowed.
  std::vector<int> cores;
  job_overrides overrides;
  // Every timed call on inputs no earlier call saw (bench_options::fresh_inputs, timed_calls.hpp).
  bool fresh_inputs = true;
  std::vector<job_config> configs;
};

BOOST_DESCRIBE_STRUCT(job_config, (),
                      (index, kernel, runtime, dtype, batch, check, base_index, check_base, base_first, control_base,
                       budget_ms, max_samples, tol, base_tol))
BOOST_DESCRIBE_STRUCT(job_overrides, (), (min_samples, max_samples, budget_ms, warmup_ms))
BOOST_DESCRIBE_STRUCT(worker_job, (),
                      (manifest, base_manifest, pairing_seed, cuda_arch, cache_dir, fingerprint_device, device_override,
                       cores, overrides, fresh_inputs, configs))

// The job file: the orchestrator writes it, the worker reads it, both through this one described type
// (rnx/common/described_json.hpp); a job that does not read as one is errc::invalid naming the key.
boost::json::value to_json(const worker_job& job);
worker_job job_from_json(const boost::json::value& v);

// The events a worker writes back, one JSON object a line (worker_main.cpp, worker_config.cpp write them).

// The worker has started (Python and torch imported) and fingerprinted its environment.
struct ready_event {
  boost::json::value environment;  // the rnx.run/v1 "environment" object
  // Seconds on the machine's monotonic clock at main(), after `import torch`, when it got its job, after the
  // device, at ready (null from an older worker): the start-up split of bench_timing.
  boost::json::value clock;
};

// The worker begins the configuration at `index` of the job.
struct start_event {
  std::size_t index = 0;
};

// What one process measured of one side of a configuration.
struct side_outcome {
  result_status status = result_status::error;
  std::string device;
  std::string message;
  // The float64 reference check, where this process ran it.
  struct reference_check {
    double max_abs_err = 0;
    double rel_err = 0;
    tolerance tol;
  };
  std::optional<reference_check> check;
  std::vector<double> samples_ms;            // status ok: this process's samples
  timed_inputs inputs = timed_inputs::same;  // status ok: what the timed calls were given
  l2_state l2 = l2_state::unstated;          // status ok: the L2's state at each timed call (CUDA: flushed)
  // CPU: what the process went through while sampling.
  struct disturbances {
    std::int64_t migrations = 0;
    std::int64_t minor_faults = 0;
    std::int64_t preempted_samples = 0;
  };
  std::optional<disturbances> disturbed;
  std::vector<double> sm_mhz;  // GPU: the SM clock read while sampling
  // The process that ran the reference check: the work of one call of the eager reference (source counted), or
  // why it could not be counted.
  std::optional<work_info> work;
  std::optional<physical_bound> bound;  // the check round: the least time a correct call can take here
  std::string work_error;
  std::vector<double> control_ms;  // paired base: the control's samples (the base alone, before the head loaded)
  std::string inputs_note;  // why the timed calls had the same inputs at every call although fresh ones were asked
};

// The worker finished the configuration at `index`: measured (one side, or both of an in-process pair), or found
// the pair could not share the process (`pair_fallback` says why; nothing measured).
struct result_event {
  std::size_t index = 0;
  std::optional<double> warmup_ms;
  double sampling_ms = 0;  // the timed sampling of this process, both sides of a pair together
  std::optional<std::string> pair_fallback;
  side_outcome head;
  std::optional<side_outcome> base;     // in-process pairs: the base side, measured in the same process
  std::optional<pair_side> first_side;  // in-process pairs: the side loaded and bound first
  boost::json::value phases_ms;         // load, inputs, bind, measure of this configuration in this process (or null)
};

using worker_event = std::variant<ready_event, start_event, result_event>;

// The event of one line the worker wrote; nullopt for a line that is not JSON or not one of these events
// (a kernel writing to the channel would be odd, but must not break the run). Throws rnx::error for one of
// these events with a malformed field.
std::optional<worker_event> event_from_line(const std::string& line);

}  // namespace rnx::runner::detail
