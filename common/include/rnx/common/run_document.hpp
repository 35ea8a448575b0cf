// The run document (rnx.run/v1): what a runner measured, typed, with a validating reader.
#pragma once

#include <boost/json/value.hpp>

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

inline constexpr std::string_view run_schema_id = "rnx.run/v1";

// Where an imported run's environment came from (docs/import.md): the machine the harness's file names, or, where
// it names none, the machine rnx import ran on. Runs of rnx bench, measured where they are written, carry none.
enum class env_origin { file, importing_machine };
std::string_view to_string(env_origin o);                                 // "file" | "importing-machine"
std::optional<env_origin> env_origin_from_string(std::string_view text);  // to_string's text back; else empty

struct env_source {
  env_origin from = env_origin::file;
  std::string path;  // where the file names its machine ("gbench-1.json: $.context"); "" for the importing machine
  // The importing machine, where it is not the machine the file names ("host ci-7, 2 threads"); else "".
  std::string imported_on;
};

// How one of a machine's peaks was measured: its own error (1 - fastest / lower quartile of its timed calls: how far
// the fastest call stands from the calls nearest it; a result within that much past the peak is at it, not beyond
// it), when (UTC, ISO 8601), and how ("the fastest of 10 calls of a 1024 x 1024 float32 matrix product on 2
// threads; other processes kept 0.05 of 2 cores busy meanwhile").
struct peak_measurement {
  double error = 0;
  std::string measured_at;
  std::string how;
};

struct environment {
  std::string env_id;  // hash of every other field except host, source and clocks; see compute_env_id
  std::string device;
  std::string compute_capability;
  std::string driver;
  std::string cuda;
  std::string torch;
  std::string python;
  std::string cpu;
  std::int64_t threads = 0;
  std::string os;
  std::string image = "none";
  // The benchmark harness an imported run came from, with its version ("gbench 1.7.1 (debug build)");
  // empty for rnx bench. Part of env_id only when set, so runs of rnx bench keep their ids.
  std::string harness;
  // sm_mhz and sm_max_mhz (a GPU's SM clock when the worker started, and its maximum), and locked: 1 where the
  // clocks were queried as held (a GPU's user-defined clocks, a CPU's cpufreq floor equal to its ceiling), 0 where
  // they were queried as free to move, absent where they could not be queried. Recorded, not part of env_id (they
  // move); rnx only reads them.
  std::map<std::string, double> clocks;
  // What the machine achieves at its best, measured once per environment by runner::machine_peaks (the names are in
  // rnx/common/speed_of_light.hpp): gemm_<dtype>_flops_per_s, copy_bytes_per_s; recorded, not part of env_id
  // (measurements, not identity).
  std::map<std::string, double> peaks;
  // When and how each of those peaks was measured, by the same names (absent in runs of an older rnx).
  std::map<std::string, peak_measurement> peak_measurements;
  // The host name a harness recorded (Google Benchmark's host_name, pytest-benchmark's node); not part of env_id,
  // because CI jobs run on hosts of a new name each time.
  std::string host;
  std::optional<env_source> source;  // imported runs: where the fields above came from; not part of env_id
};

// SHA-256 (hex, first 16 characters) of the fields that define "the same environment".
std::string compute_env_id(const environment& env);

// The one rule for kernel names, shared by rnx.toml's [[kernel]] name and every run document's results: 1 to 128
// letters, digits, '_', '-' or '.'. An imported result (one with an `origin`) keeps its harness's name, which
// may hold any printable character but no control character. Returns "" when `name` follows the rule, else what
// to write, for the caller's message.
std::string kernel_name_problem(std::string_view name, bool imported = false);

enum class result_status { ok, diverged, error, skipped };
std::string_view to_string(result_status s);
std::optional<result_status> result_status_from_string(std::string_view s);  // "ok", "diverged", "error", "skipped"

// How a configuration of a paired run was measured: base and head alternated in blocks inside the same worker
// processes ("in-process"), or each side in processes of its own, interleaved ("process"); none outside paired
// runs (no "pairing" member in the documents, "" as text).
enum class pairing_mode { none, process, in_process };
std::string_view to_string(pairing_mode p);
std::optional<pairing_mode> pairing_mode_from_string(std::string_view text);  // "in-process" or "process"

// What the timed calls of a configuration were given: the same bound inputs at every call ("same", the default,
// no "timed_inputs" member in the documents), or inputs no earlier call saw ("fresh": a pool of input sets at
// their own addresses, the floating-point values redrawn before each use; docs/runner.md, fresh inputs).
enum class timed_inputs { same, fresh };
std::string_view to_string(timed_inputs t);
std::optional<timed_inputs> timed_inputs_from_string(std::string_view text);  // "same" or "fresh"

// The state of the GPU's L2 cache each timed call started in: "flushed" (rnx bench's CUDA timing flushes it before
// every call, both sides of a pair alike; docs/runner.md), or unstated (CPU results, imported runs; no "l2" member).
enum class l2_state { unstated, flushed };
std::string_view to_string(l2_state s);
std::optional<l2_state> l2_state_from_string(std::string_view text);  // "flushed"

// The runtimes a configuration is measured in: those rnx bench runs a Python or TorchScript kernel in, cpp (a
// native kernel), and the harnesses of imported runs ("pytest-benchmark" as text).
enum class runtime_kind { eager, compile, torchscript, onnxruntime, tensorrt, cpp, gbench, pytest_benchmark, nvbench };
std::string_view to_string(runtime_kind r);
std::optional<runtime_kind> runtime_kind_from_string(std::string_view name);
// The names rnx.toml's runtimes and --runtime accept: eager, compile, torchscript, onnxruntime, tensorrt.
const std::vector<std::string>& bench_runtime_names();

// The dtypes a configuration is measured in; none is an imported configuration's whose parameters name none.
enum class dtype_kind { float32, float16, bfloat16, float64, none };
std::string_view to_string(dtype_kind d);
std::optional<dtype_kind> dtype_kind_from_string(std::string_view name);
// The names rnx.toml's dtypes and --dtype accept: float32, float16, bfloat16, float64.
const std::vector<std::string>& measured_dtype_names();

// Where a result's work came from: counted over one call of the eager reference (torch's FLOP counter, the
// tensors' storage), or declared in rnx.toml (a kernel's flops / bytes expressions, which win where given).
enum class work_source { counted, declared };
std::string_view to_string(work_source s);
std::optional<work_source> work_source_from_string(std::string_view text);  // "counted" or "declared"

// The work of one call of a configuration, the same for every runtime of it (docs/manifest.md, work): floating-point
// operations, and the minimum bytes moved (each distinct storage of the inputs, weights and outputs once). Either
// may be unknown, never both.
struct work_info {
  std::optional<std::int64_t> flops;
  std::optional<std::int64_t> bytes;
  work_source source = work_source::counted;
  // Counted work only: the elements of transcendental elementwise functions (erf, exp, tanh, ...) one call
  // evaluates. The FLOP counter counts none of that arithmetic and no measured peak is its: where it is there and
  // the bytes bind, the speed of light names its bound elementwise (speed_of_light.hpp).
  std::optional<std::int64_t> elementwise;
};

// The least time a correct call can take on the device that measured it: a call returns `output_bytes` of output
// it must write, and the device's own fastest fill of that many bytes, timed as the samples were, takes `write_ms`
// (runner::write_bound_ms). A median per-call time below write_ms / physics_margin is beyond what the device can do.
struct physical_bound {
  std::int64_t output_bytes = 0;
  double write_ms = 0;
};
// The margin covers the clocks' jitter and a fill measured in a slow spell of a shared machine.
inline constexpr double physics_margin = 2;
// Whether `median_ms` is faster than the bound allows.
bool beyond_physics(const physical_bound& b, double median_ms);
// Why, with the figures: "a call returns 64 MiB of output, which this device cannot write in less than 0.42 ms, yet
// its median call took 0.000436 ms (a result kept from an earlier call is returned, not computed)". The one wording
// of the verdict's reason and the bench summary's note.
std::string physics_text(const physical_bound& b, double median_ms);

struct tolerance {
  double rtol = 0;
  double atol = 0;
};

// Identifies one measured configuration across runs.
struct config_key {
  std::string kernel;
  std::string runtime;
  std::string dtype;
  std::int64_t batch = 0;
  auto operator<=>(const config_key&) const = default;
  bool operator==(const config_key&) const = default;
  std::string label() const;  // "attention/eager/float32/b8"
};

// What a harness reported for a configuration whose per-sample times it did not keep (rnx import
// --allow-aggregates): the verdict abstains on such a result, since no posterior can be formed from them.
struct aggregate_summary {
  std::int64_t count = 0;  // samples (repetitions, rounds) the harness summarized
  std::optional<double> mean_ms;
  std::optional<double> median_ms;
  std::optional<double> stddev_ms;
  std::optional<double> min_ms;
  std::optional<double> max_ms;
};

// Which side of a paired run a document measured: the change under test ("head") or what it is compared with
// ("base").
enum class pair_side { head, base };
std::string_view to_string(pair_side s);
std::optional<pair_side> pair_side_from_string(std::string_view text);  // "head" or "base"

// In-process pairs: the base measured alone, in a process without the head, against the base beside the head in
// the same round (docs/runner.md, a head cannot steer its base). ratio = median beside the head / median alone;
// above 1 + limit in two processes the head slowed its base, and the pair was judged by process pairing instead
// (steered). A pair steered by its load order carries that check here: the ratio with the head first over the ratio
// with the base first, beyond 1 ± limit.
struct base_control_check {
  double ratio = 1;
  double limit = 0;
  bool steered = false;
};

struct run_result {
  std::string kernel;
  std::string runtime;
  std::string dtype;
  std::int64_t batch = 0;
  std::string device;
  result_status status = result_status::ok;
  std::vector<double> samples_ms;
  std::vector<std::int64_t> groups;  // consecutive samples per worker process; empty = one group
  // In-process pairs: the side loaded and bound first in each group's process, one per group (the orchestrator
  // alternates it), so the verdict weighs the two orders alike and does not count their difference as noise
  // (docs/statistics.md, paired runs); empty where not recorded.
  std::vector<pair_side> first_sides;
  bool unstable = false;
  std::optional<double> max_abs_err;
  std::optional<double> rel_err;
  std::optional<tolerance> tol;
  std::string message;
  // Paired runs only: in_process (base and head alternated in blocks inside the same worker processes, so
  // samples 4j..4j+3 of both sides come from block j of the same process) or process (each side in its own
  // processes, interleaved; `pairing_reason` says why it could not share one). none outside paired runs.
  pairing_mode pairing = pairing_mode::none;
  std::string pairing_reason;
  std::optional<base_control_check> base_control;  // in-process pairs: the check above, where it ran
  timed_inputs inputs = timed_inputs::same;        // fresh: every timed call had inputs no earlier call saw
  l2_state l2 = l2_state::unstated;                // flushed: every timed call started with the GPU's L2 flushed
  // `rnx bench --devices`: the device lane that measured every process of this configuration ("cuda:1",
  // "cpu:0-3"); both sides of a pair name the same one. Empty when the run had no device list.
  std::string measured_on;
  // Imported runs (rnx import, docs/import.md): the harness's parameters of this configuration in the harness's
  // order, the harness's own name for it, and its summaries when it kept no samples (samples_ms then empty).
  std::vector<std::pair<std::string, std::string>> params;
  std::string origin;
  std::optional<aggregate_summary> aggregates;
  std::optional<work_info> work;        // absent where neither count nor declaration is known (a native kernel)
  std::optional<physical_bound> bound;  // rnx bench: the least time a correct call can take (absent elsewhere)

  config_key key() const { return {kernel, runtime, dtype, batch}; }
};

// Samples a side in one block of an in-process paired measurement (ABBA BAAB: four of each).
inline constexpr std::int64_t in_process_block = 4;

// How a paired run (`rnx bench --pair`) was taken; both of its documents carry the same id.
struct pairing_info {
  std::string id;  // shared by the base and head documents of one paired run
  pair_side side = pair_side::head;
  std::string partner_commit;             // the other side's commit
  std::int64_t block = in_process_block;  // samples per side per in-process block
  std::int64_t looks = 1;                 // looks of the sequential schedule (processes min..max); the verdict's
                                          // probability threshold is split over them (docs/statistics.md)
};

// How the configurations of a suite were split over the jobs of a CI matrix (`rnx bench --shard K/N`).
enum class shard_balance { cost, count };  // by the stored cost of each configuration, or by their number
std::string_view to_string(shard_balance b);

// One shard's share of a sharded run: the documents of one run group are judged together (docs/scaling.md).
struct shard_info {
  std::int64_t index = 1;  // K of K/N, from 1
  std::int64_t count = 1;  // N
  std::string group;       // the run group: commit + workflow run + attempt ([A-Za-z0-9._-], at most 200)
  shard_balance balanced_by = shard_balance::count;
  // Every configuration of the suite with the shard that measures it, so any shard names a missing one's share.
  std::vector<std::pair<config_key, std::int64_t>> assignment;
};

struct run_document {
  std::string project;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::optional<std::int64_t> pull_request;
  std::string created_at;  // RFC 3339 UTC
  environment env;
  std::vector<run_result> results;
  std::optional<pairing_info> pairing;
  std::optional<shard_info> shard;  // a shard of a sharded run
};

// Whether a document's kernel names must follow kernel_name_problem's rule: a document coming in (upload, file,
// import) must; one a store already holds and reads back is kept readable under whatever rule it was stored.
enum class kernel_names { checked, as_stored };

// Validates against docs/schema/run.schema.json's rules; throws rnx::error(invalid) naming
// `source` and the JSON path on the first violation. Duplicate configurations are rejected.
run_document run_from_json(const boost::json::value& v, std::string_view source,
                           kernel_names names = kernel_names::checked);
// Reads a file; not_found / bad_input / invalid errors name the file.
run_document read_run_file(const std::string& path);
boost::json::value to_json(const run_document& run);
void write_run_file(const run_document& run, const std::string& path);  // atomic: temp + rename

// Current UTC time in RFC 3339 ("2026-12-02T10:00:00Z").
std::string utc_now_rfc3339();

}  // namespace rnx
