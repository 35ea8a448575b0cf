// Op profiles: trace events aggregated into a table ranked by share of self time, with call counts, and
// Amdahl what-ifs ("op X k× faster -> whole run N× faster"). Torch-free: the libtorch collector
// (profile_kernel.hpp) and the torch.profiler trace importer both feed trace_event lists into aggregate().
//
//   auto p = rnx::optimize::import_trace("trace.json");       // parsed, never executed
//   for (const auto& w : rnx::optimize::what_ifs(p, 3, {2, 10})) std::cout << w.op << " " << w.whole << "\n";
//   std::cout << rnx::optimize::render_profile_markdown(p);
#pragma once

#include <boost/json/value.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rnx::optimize {

// One complete event of a trace: a host-side operator or a device kernel.
struct trace_event {
  std::string name;
  bool device_kernel = false;  // a GPU kernel (no nesting) rather than a host operator
  std::string thread;          // events nest only within one thread
  double start_us = 0;
  double dur_us = 0;
};

struct op_row {
  std::string name;
  std::string family;  // "matrix multiply", "softmax", ... for people; empty when unknown
  std::int64_t calls = 0;
  double self_ms = 0;   // time inside the op and not inside an op it called
  double total_ms = 0;  // including the ops it called
  double share = 0;     // self_ms / the profile's wall_ms: the Amdahl fraction
};

struct op_profile {
  std::string kernel;
  std::string source;  // "libtorch profiler" or "imported FILE"
  std::string device;  // cpu | cuda:N
  std::string runtime;
  std::string dtype;
  std::int64_t batch = 0;
  std::int64_t profiled_calls = 0;  // kernel calls inside the profiled window (0 when unknown)
  double wall_ms = 0;               // the profiled window's wall time
  std::string ranked_by;            // "self CPU time" or "GPU kernel time"
  std::vector<op_row> ops;          // ranked by self time, largest first
};

// Aggregates events by name. Host operators get self time by nesting (per thread); when any device kernels are
// present they are the ranked rows (GPU time is what a CUDA kernel's speed is). wall_ms <= 0 means the span of
// the events. Shares are of wall_ms, so time outside every op counts as the part no rewrite of an op can speed.
op_profile aggregate(const std::vector<trace_event>& events, double wall_ms);

// Amdahl's law: the whole run's speedup when a fraction `share` of it gets `k` times faster
// (k = infinity: the fraction vanishes). Returns 1 for share <= 0; share is clamped to [0, 1].
double amdahl_speedup(double share, double k);

struct what_if {
  std::string op;
  double share = 0;
  double k = 0;      // the op's speedup supposed
  double whole = 0;  // the whole run's speedup that follows
};

// For each of the top `top` ops, each factor in `factors` (use INFINITY for "removed entirely").
std::vector<what_if> what_ifs(const op_profile& p, int top, const std::vector<double>& factors);

// Reads a torch.profiler Chrome trace (export_chrome_trace / tensorboard handler): {"traceEvents": [...]} or a bare
// array. Only complete events ("ph": "X") of category cpu_op and kernel count. Errors: not_found, bad_input
// (malformed JSON, naming line and column), invalid (no operator events, naming what the file holds instead).
op_profile import_trace(const std::filesystem::path& path);
op_profile import_trace_text(std::string_view text, const std::string& source);

boost::json::value to_json(const op_profile& p, int top, const std::vector<double>& factors);
// Reads what to_json wrote (every op row; the what-ifs are recomputed, not read). Throws rnx::error(invalid).
op_profile profile_from_json(const boost::json::value& v, const std::string& source);
std::string render_profile_text(const op_profile& p, int top, const std::vector<double>& factors);
std::string render_profile_markdown(const op_profile& p, int top, const std::vector<double>& factors);

// "matrix multiply" for aten::mm, bmm, matmul, addmm, ...; "" when the op is not in the small table.
std::string op_family(std::string_view op_name);

}  // namespace rnx::optimize
