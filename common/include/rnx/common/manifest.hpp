// The rnx.toml manifest: project, defaults, kernels, bench settings, [gate] policy and [service], typed and validated.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/shape_expression.hpp"
#include "rnx/common/verdict_document.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// One dimension of a declared input shape: a fixed size, or the batch symbol `B`.
struct shape_dim {
  std::int64_t size = 0;
  bool is_batch = false;
};

// A named input of a kernel, in the order it is written in the manifest (the call order).
struct input_spec {
  std::string name;
  std::vector<shape_dim> dims;  // empty = a 0-dimensional (scalar) tensor
  std::string text;             // the shape as written, for messages

  std::vector<std::int64_t> resolve(std::int64_t batch) const;
};

// Parses "B,8,128,64"; throws rnx::error(invalid) naming `where` on a bad dimension.
std::vector<shape_dim> parse_shape(std::string_view text, std::string_view where);

// How samples are gathered; [bench] in rnx.toml, each field overridable per kernel.
struct bench_settings {
  int processes = 3;            // worker processes per configuration (the first look of a paired run)
  int max_processes = 6;        // a paired run adds processes, one look at a time, up to this many while a
                                // configuration is undecided (docs/statistics.md, sequential sampling)
  int min_samples = 8;          // per process, never fewer
  int max_samples = 1000;       // per process, at most (a cap: budget_ms and noise decide how many are taken)
  double budget_ms = 1500;      // per configuration and process (and side), for the timed samples; a paired run's
                                // later looks double it per look while the configuration's total budget lasts
  double total_budget_s = 20;   // per configuration: timed samples over all its processes and both sides
  double warmup_ms = 300;       // minimum warm-up time per configuration and process
  double min_sample_ms = 0.1;   // a CPU sample times a block of calls lasting at least this long (short blocks
                                // are rarely preempted; the clock read costs ~25 ns, 0.03% of 0.1 ms)
  double noise = 0.005;         // stop early when the median's relative 95% CI half-width is below this
  double timeout_s = 120;       // a configuration silent for longer than this is killed (hang)
  int threads = 0;              // intra-op threads of the worker; 0 = all hardware threads
  std::uint64_t seed = 0;       // input seed; each configuration derives its own from this
  std::set<std::string> given;  // the keys [bench] or the kernel's own table set (the others are defaults)
};

// A configuration measured on a CUDA device takes these where the manifest leaves the key to its default: every
// timed CUDA call is flushed and event-timed, so a process's ratio is known to about 0.1% in a fraction of a
// second, and the CPU's budgets would spend ten times what deciding needs (docs/runner.md, the cost of a
// configuration; bench/results/cost_gpu_*.json).
struct cuda_bench_defaults {
  static constexpr double budget_ms = 250;
  static constexpr double total_budget_s = 5;
  static constexpr double warmup_ms = 25;  // warm-up also lasts until the calls settle (runner/src/timing.cpp)
};

// `b` with cuda_bench_defaults in place of every default it holds when the configuration runs on CUDA; `b` itself
// otherwise.
bench_settings settings_for(const bench_settings& b, bool cuda);

// What a kernel file is, from its extension: .py, .pt, .cpp or .cc, .cu; unknown for any other.
enum class kernel_kind { unknown, python, torchscript, cpp, cuda };
std::string_view to_string(kernel_kind k);  // "", "python", "torchscript", "cpp", "cuda"
std::optional<kernel_kind> kernel_kind_from_string(std::string_view text);

// What rnx.toml's device and --device name: auto (CUDA when there is one), cpu, cuda or cuda:N.
enum class device_kind { automatic, cpu, cuda };
std::string_view to_string(device_kind d);  // "auto", "cpu", "cuda"
// The kind of a device name ("cuda:1" is cuda); nullopt for any other text, "cuda:" without a number included.
std::optional<device_kind> device_kind_from_string(std::string_view name);

struct kernel_spec {
  std::string name;
  std::string path;                     // as written, relative to the manifest's folder
  std::filesystem::path resolved_path;  // absolute
  std::string entry;                    // function / symbol; empty = the kind's default
  std::vector<input_spec> inputs;       // empty for KernelBench files and TorchScript with example inputs
  std::vector<std::string> runtimes;
  std::vector<std::string> dtypes;
  std::vector<std::int64_t> batch;
  std::string device;                           // auto | cpu | cuda | cuda:N
  std::map<std::string, tolerance> tolerances;  // per dtype overrides of torch.testing's defaults
  bench_settings bench;
  // Declared work of one call (flops / bytes), for a kernel torch's FLOP counter cannot see into; where given,
  // these win over what is counted from the eager reference (docs/manifest.md, work).
  std::optional<shape_expression> flops;
  std::optional<shape_expression> bytes;
  std::int64_t line = 0;  // where its [[kernel]] table starts, for messages

  kernel_kind kind() const;                                                                  // from the extension
  bool native() const { return kind() == kernel_kind::cpp || kind() == kernel_kind::cuda; }  // compiled C++/CUDA
};

// [gate] on_service_error: what `rnx gate` does when the service it is given cannot be used (refused, a host that
// does not resolve, TLS, a wrong path, an error answer): warn (the report leads with "no verdict", exit 0) or fail
// (the same report, an error annotation and exit 2).
enum class service_error_action { warn, fail };
std::string_view to_string(service_error_action a);
std::optional<service_error_action> service_error_action_from_string(std::string_view text);

struct manifest {
  std::string source;          // the file it was read from (for messages)
  std::filesystem::path root;  // the folder paths are relative to
  std::string project;
  std::vector<kernel_spec> kernels;
  bench_settings bench;  // [bench] as written (kernels hold their merged copy)
  std::string devices;   // [bench] devices: lanes measuring at once ("cuda:0,cuda:1"); empty = one
  // [bench] pass_env: variables the kernels' processes keep although rnx::kernel_withheld_variables withholds them
  std::vector<std::string> pass_env;
  gate_policy gate;
  std::map<std::string, gate_policy> gate_runners;                     // [gate.runners.NAME]: policy per runner label
  service_error_action on_service_error = service_error_action::warn;  // [gate] on_service_error
  std::string service_url;
  std::string cuda_arch;  // [build] cuda_arch, e.g. "sm_90"; empty = detect

  const kernel_spec* find_kernel(std::string_view name) const;
};

// torch.testing.assert_close's default tolerance for a dtype; by name, a name outside dtype_kind gets float32's.
tolerance default_tolerance(dtype_kind dtype);
tolerance default_tolerance(std::string_view dtype);

// Parses manifest text. Errors are rnx::error(bad_input) for TOML syntax ("SOURCE:LINE:COL: ...") and
// rnx::error(invalid) for wrong values ("SOURCE:LINE: key 'kernel[2].batch': ..."), always saying what to write.
manifest parse_manifest(std::string_view text, const std::string& source, const std::filesystem::path& root);
// Reads and parses a file; a missing file is errc::not_found. Kernel files must exist (checked here).
manifest load_manifest(const std::filesystem::path& path);

}  // namespace rnx
