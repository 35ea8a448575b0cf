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
BOOST_DESCRIBE_STRUCT(work_info, (), (flops, bytes, source, elementwise))
BOOST_DESCRIBE_STRUCT(physical_bound, (), (output_bytes, write_ms))
BOOST_DESCRIBE_ENUM(result_status, ok, diverged, error, skipped)
BOOST_DESCRIBE_ENUM(timed_inputs, same, fresh)
BOOST_DESCRIBE_ENUM(l2_state, unstated, flushed)
BOOST_DESCRIBE_ENUM(work_source, counted, declared)
BOOST_DESCRIBE_ENUM(pair_side, head, base)
}  // namespace rnx

namespace rnx::runner::detail {

// The "event" names of the lines a worker writes on its result pipe (the sandbox's launch lines come before them):
// loaded (Python and the kernels' modules are in), contained (its own seccomp filter), log (a contained worker's
// log line), ready (its environment), start and result (per configuration).
enum class worker_line { loaded, contained, log, ready, start, result };
BOOST_DESCRIBE_ENUM(worker_line, loaded, contained, log, ready, start, result)
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

// The events a worker writes back, one JSON object a line, each a described type written and read by the one
// codec (rnx/common/described_json.hpp): worker_main.cpp and worker_config.cpp fill them, the orchestrator reads
// them. `event` names the line (worker_line).

// Seconds on the machine's monotonic clock at main(), after `import torch`, when the worker got its job, after the
// device, at ready: the start-up split of bench_timing.
struct worker_clock {
  double main = 0;
  double python = 0;
  double released = 0;
  double device = 0;
  double ready = 0;
};

// A worker started ahead of its turn has started Python and imported torch, and waits for its job: the seconds at
// main() and after the import (the rest of worker_clock is 0 here).
struct loaded_event {
  worker_line event = worker_line::loaded;
  worker_clock clock;
};

// A contained worker has sealed itself (no capabilities, its own seccomp filter) before reading any kernel, or
// says why it could not.
struct contained_event {
  worker_line event = worker_line::contained;
  bool seccomp = false;
  std::string why;
};

// A contained worker's log line (its log stays in its sandbox), kept by the orchestrator as the log's tail.
struct log_event {
  worker_line event = worker_line::log;
  std::string line;
};

// The worker has started (Python and torch imported) and fingerprinted its environment.
struct ready_event {
  worker_line event = worker_line::ready;
  boost::json::value environment;  // the rnx.run/v1 "environment" object
  int pinned_cpu = -1;             // the core the worker's main thread was pinned to, or -1
  worker_clock clock;
};

// The worker begins the configuration at `index` of the job.
struct start_event {
  worker_line event = worker_line::start;
  std::size_t index = 0;
};

// The float64 reference check, where a process ran it: the errors (the largest double stands in for an infinite
// one: JSON has no infinity) and the tolerance it applied.
struct reference_check {
  double max_abs_err = 0;
  double rel_err = 0;
  tolerance tol;
};

// CPU: what the process went through while sampling.
struct disturbances {
  std::int64_t migrations = 0;
  std::int64_t minor_faults = 0;
  std::int64_t major_faults = 0;
  std::int64_t preempted_samples = 0;
};

// What one process measured of one side of a configuration.
struct side_outcome {
  result_status status = result_status::error;
  std::string device = "cpu";
  std::string message;
  int threads = 0;  // the CPU threads torch ran with
  std::optional<reference_check> check;
  std::vector<double> samples_ms;            // status ok: this process's samples
  timed_inputs inputs = timed_inputs::same;  // status ok: what the timed calls were given
  l2_state l2 = l2_state::unstated;          // status ok: the L2's state at each timed call (CUDA: flushed)
  std::int64_t calls_per_sample = 0;         // status ok: the sampler's batching
  std::int64_t warmup_calls = 0;
  std::optional<disturbances> disturbed;
  std::vector<double> sm_mhz;     // GPU: the SM clock read while sampling
  std::int64_t timed_checks = 0;  // timed calls whose output was held to the kernel's own untimed answer
  // The process that ran the reference check: the work of one call of the eager reference (source counted), or
  // why it could not be counted.
  std::optional<work_info> work;
  std::optional<physical_bound> bound;  // the check round: the least time a correct call can take here
  std::string work_error;
  std::vector<double> control_ms;  // paired base: the control's samples (the base alone, before the head loaded)
  std::string inputs_note;  // why the timed calls had the same inputs at every call although fresh ones were asked
};

// Where one configuration's time in one process went (milliseconds): the control (paired, base first), loading the
// kernel(s), making inputs, binding the runtime, the reference checks with the count of the work, measuring
// (warm-up, sampling, the input pools and the sampler's own calibration) and the timed outputs' audit. A phase the
// process did not go through is 0.
struct config_phases {
  double control = 0;
  double load = 0;
  double inputs = 0;
  double bind = 0;
  double check = 0;
  double measure = 0;
  double audit = 0;
};

// The worker finished the configuration at `index`: measured (one side, or both of an in-process pair), or found
// the pair could not share the process (`pair_fallback` says why; nothing measured).
struct result_event {
  worker_line event = worker_line::result;
  std::size_t index = 0;
  std::optional<std::string> pair_fallback;
  std::optional<double> warmup_ms;  // the head's warm-up
  double sampling_ms = 0;           // the timed sampling of this process, both sides of a pair together
  side_outcome head;
  std::optional<side_outcome> base;     // in-process pairs: the base side, measured in the same process
  std::optional<pair_side> first_side;  // in-process pairs: the side loaded and bound first
  bool shared_inputs = false;           // in-process pairs: both sides were given the very same tensors
  std::int64_t rehomed_tensors = 0;     // in-process pairs: weights moved to new memory, interleaved
  std::int64_t retaken_blocks = 0;      // in-process pairs: blocks timed again after a disturbance
  config_phases phases_ms;
};

using worker_event = std::variant<ready_event, start_event, result_event>;

BOOST_DESCRIBE_STRUCT(worker_clock, (), (main, python, released, device, ready))
BOOST_DESCRIBE_STRUCT(loaded_event, (), (event, clock))
BOOST_DESCRIBE_STRUCT(contained_event, (), (event, seccomp, why))
BOOST_DESCRIBE_STRUCT(log_event, (), (event, line))
BOOST_DESCRIBE_STRUCT(ready_event, (), (event, environment, pinned_cpu, clock))
BOOST_DESCRIBE_STRUCT(start_event, (), (event, index))
BOOST_DESCRIBE_STRUCT(reference_check, (), (max_abs_err, rel_err, tol))
BOOST_DESCRIBE_STRUCT(disturbances, (), (migrations, minor_faults, major_faults, preempted_samples))
BOOST_DESCRIBE_STRUCT(side_outcome, (),
                      (status, device, message, threads, check, samples_ms, inputs, l2, calls_per_sample, warmup_calls,
                       disturbed, sm_mhz, timed_checks, work, bound, work_error, control_ms, inputs_note))
BOOST_DESCRIBE_STRUCT(config_phases, (), (control, load, inputs, bind, check, measure, audit))
BOOST_DESCRIBE_STRUCT(result_event, (),
                      (event, index, pair_fallback, warmup_ms, sampling_ms, head, base, first_side, shared_inputs,
                       rehomed_tensors, retaken_blocks, phases_ms))

// An event as the one line the worker writes for it.
boost::json::object to_json(const loaded_event& e);
boost::json::object to_json(const contained_event& e);
boost::json::object to_json(const log_event& e);
boost::json::object to_json(const ready_event& e);
boost::json::object to_json(const start_event& e);
boost::json::object to_json(const result_event& e);

// The event of one line the worker wrote; nullopt for a line that is not JSON or not one of these events (the
// sandbox's lines and the worker's log lines are read where they matter). Throws rnx::error (invalid) naming the
// key for one of these events that does not read as its type.
std::optional<worker_event> event_from_line(const std::string& line);

}  // namespace rnx::runner::detail
