// Benchmarking a manifest: plan the configurations, run them in worker processes (interleaved, isolated,
// with timeouts) and assemble rnx.run/v1 results. Torch-free: the workers hold libtorch and Python.
//
//   rnx::runner::bench_options o;
//   o.manifests = {"rnx.toml"};                  // add a second (the base revision's) for a paired run
//   auto sides = rnx::runner::run_bench(o);      // one bench_side per manifest
//   rnx::run_document doc = rnx::runner::make_run_document(sides[0], "abc123", "feature-x", "main", {});
#pragma once

#include "rnx/common/manifest.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/sandbox/sandbox.hpp"

#include <boost/json/object.hpp>

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::runner {

struct bench_filters {
  std::vector<std::string> kernels;
  std::vector<std::string> runtimes;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batches;
};

// Whether a device lane starts its next worker while the current one measures (docs/scaling.md, prestart): the
// next worker starts Python and imports torch, then waits for its job before it touches the device. automatic:
// on for CUDA lanes, off for CPU ones (where the import would take cores from the measurement) and for
// contained workers.
enum class prestart_mode { automatic, on, off };
std::string_view to_string(prestart_mode mode);
// "auto" | "on" | "off"; throws rnx::error(usage) naming the accepted values.
prestart_mode parse_prestart_mode(std::string_view text);

struct bench_options {
  std::vector<std::filesystem::path> manifests;  // [head] or [head, base]; sides run interleaved per process
  bench_filters filters;
  std::string device;  // overrides every kernel's device when set
  // Device lanes measuring configurations at once ("cuda:0,cuda:1", "cpu:0-0,cpu:1-1"): each configuration, both
  // sides of it, on one lane for the whole run (docs/scaling.md). Empty: the manifest's [bench] devices, else one
  // lane on `device`.
  std::string devices;
  prestart_mode prestart = prestart_mode::automatic;
  std::optional<int> processes;      // the first look of a paired run
  std::optional<int> max_processes;  // paired runs: processes while a configuration is undecided
  std::optional<int> min_samples;
  std::optional<int> max_samples;
  std::optional<double> budget_ms;
  std::optional<double> warmup_ms;
  std::optional<double> timeout_s;
  std::filesystem::path worker;       // empty = default_worker_path()
  std::filesystem::path cache_dir;    // compiled kernels; empty = default_cache_dir()
  std::ostream* log = nullptr;        // progress; nullptr = silent
  bool live = false;                  // a terminal: one live status line instead of plain lines
  std::optional<gate_policy> policy;  // paired runs' sequential looks; default: the head's [gate]
  bool in_process_pairing = true;     // false: every pair in separate processes (for comparison)
  // Every timed call on inputs no earlier call saw (docs/runner.md, fresh inputs; the default): a pool of input
  // sets per configuration and process, each at its own addresses, every value (any dtype) redrawn by the kernel's
  // own input maker before each use outside the clock, one set per call of a sample, and the outputs of a few timed
  // calls checked against the reference on their inputs. Results then carry timed_inputs::fresh. Off
  // (`--same-inputs`): the same bound inputs at every call (the kernel called in a loop), which a kernel that
  // remembers its answers per input can exploit.
  bool fresh_inputs = true;
  // Untrusted kernels (rnx optimize's candidates): set, every worker starts inside rnx::sandbox with these
  // limits (its own user, network, mount and process namespaces; writes only in a scratch folder of its own;
  // rlimits; the allow-listed environment, no secrets) and drops its capabilities and installs the seccomp
  // filter on itself before any kernel is imported. A layer that cannot be applied fails the worker unless
  // `allow_weaker` is set. Unset: workers run as the user, with the full environment (a repository's own
  // kernels, trusted by its CI).
  std::optional<sandbox::sandbox_limits> contain;
  // A shard of a sharded run (`rnx bench --shard K/N`): only these configurations, on either side. Unset: all
  // that the filters select.
  std::optional<std::set<config_key>> only;
};

struct bench_side {
  manifest source;
  environment env;
  std::vector<run_result> results;
  std::optional<pairing_info> pairing;  // paired runs (the caller fills partner_commit)
};

// One configuration's share of a bench: its processes' time (a paired configuration's both sides together).
struct config_timing {
  std::string label;        // kernel/runtime/dtype/bBATCH
  std::string measured_on;  // its device lane (empty without --devices)
  int processes = 0;
  double busy_s = 0;  // every step below and the rest of measuring, over its processes
  // busy_s split into its steps (seconds, summed over its processes), to find where one configuration's time goes
  double control_s = 0;  // paired, base first: the base timed beside its twin before the head is imported
  double load_s = 0;
  double inputs_s = 0;
  double bind_s = 0;
  double check_s = 0;  // the float64 reference checks and the count of the call's work
  double warmup_s = 0;
  double sampling_s = 0;
  double audit_s = 0;  // comparing the audited timed calls' outputs with the kernel's untimed answers
};

// Where a bench's wall time went (seconds), for the benchmark scripts, the summary line and --timings.
struct bench_timing {
  double total_s = 0;
  double worker_start_s = 0;  // waited for: from starting a worker (releasing a prestarted one) to its "ready"
  double warmup_s = 0;        // warm-up of every configuration (a paired configuration's once)
  double sampling_s = 0;      // timed samples
  int workers = 0;            // worker processes started
  int lanes = 1;              // device lanes measuring at once
  // Each worker's start by phase, summed over the workers whether waited for or hidden by a prestart:
  double start_exec_s = 0;         // exec and the binary's libraries (libtorch), up to main()
  double start_python_s = 0;       // the embedded Python and `import torch`
  double start_device_s = 0;       // the device: binding cores, the CUDA context
  double start_fingerprint_s = 0;  // the environment fingerprint
  double start_hidden_s = 0;       // start-up done by prestarted workers while another worker measured
  // Each configuration's time in its processes, by step, summed:
  double control_s = 0;        // paired, base first: the base timed beside its twin before the head is imported
  double load_s = 0;           // importing / loading the kernel(s)
  double inputs_s = 0;         // making the inputs
  double bind_s = 0;           // binding the runtime (compiling, tracing)
  double check_s = 0;          // the float64 reference checks and the count of the call's work
  double audit_s = 0;          // comparing the audited timed calls' outputs with the kernel's untimed answers
  double measure_other_s = 0;  // measuring beyond warm-up and sampling (input pools, calibrating calls per sample)
  std::vector<config_timing> configs;
};

// The split as a table (stderr of `rnx bench --timings`) and as JSON (`--timings FILE`).
void print_timing(std::ostream& os, const bench_timing& t);
boost::json::object timing_json(const bench_timing& t);

// $RNX_WORKER, else rnx-runner-worker beside the running executable, else on PATH.
std::filesystem::path default_worker_path();

// With two manifests (a paired run) every configuration present on both sides is measured with its base in the
// same worker processes, alternated in blocks (in-process pairing), unless the two cannot share a process; then
// the sides run in processes of their own, interleaved. Processes are added one look at a time, from
// `processes` to `max_processes`, until the configuration is decided (docs/statistics.md).
// Throws rnx::error(usage) when the filters name an unknown kernel or select nothing, and rnx::error(not_found /
// bad_input / invalid) for a bad manifest. Kernel failures never throw: they become results with a message.
std::vector<bench_side> run_bench(const bench_options& options, bench_timing* timing = nullptr);

// The configurations of the head manifest (options.manifests[0]) that the filters select, in the order a bench
// runs them: the suite that `rnx bench --shard K/N` splits (runner/src/shard.cpp). Ignores `only`.
std::vector<config_key> planned_configs(const bench_options& options);

// The shard `index` of `count` of the suite: the split (split_shards, by the costs given where known) recorded
// as a run document's shard member, and `only` set to its configurations. rnx::error(usage) when the suite has
// fewer configurations than shards (a shard would measure nothing).
shard_info plan_shard(bench_options& options, std::int64_t index, std::int64_t count, const std::string& group,
                      const std::map<config_key, double>& costs);

run_document make_run_document(const bench_side& side, std::string commit, std::string branch, std::string base_branch,
                               std::optional<std::int64_t> pull_request);

// A fixed-width table: configuration, status, median, spread, samples per process, note.
void print_summary(std::ostream& os, const run_document& run);

}  // namespace rnx::runner
