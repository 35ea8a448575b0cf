// Why a configuration's time moved: the profile diff of its base and head (each run once more under the profiler,
// untimed, in its own worker process) and the counts that do not jitter, as a verdict document carries them
// (config_verdict::explanation) and as reports render them. Torch-free: rnx::explain fills it, everyone reads it.
//
//   if (const auto& e = c.explanation) for (const auto& line : top_lines(*e, 5)) std::cout << line << "\n";
#pragma once

#include <boost/json/value.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// explained: both sides profiled; failed: a side could not be profiled (note says why); over_budget: not profiled,
// the job's [gate] explain_budget_s was spent before this configuration's turn.
enum class explain_status { explained, failed, over_budget };
std::string_view to_string(explain_status s);  // "explained", "failed", "over-budget"
std::optional<explain_status> explain_status_from_string(std::string_view s);

// What changed about one operator (CPU) or device kernel (GPU), most telling first: present on one side only, called
// a different number of times a call, or the same calls taking a different time.
enum class change_kind { added, removed, calls, time };
std::string_view to_string(change_kind k);  // "added", "removed", "calls", "time"
std::optional<change_kind> change_kind_from_string(std::string_view s);

struct op_change {
  std::string name;  // aten::exp, or a device kernel's name
  change_kind kind = change_kind::time;
  double base_calls = 0;  // its calls per call of the kernel (profiled calls over kernel calls)
  double head_calls = 0;
  double base_ms = 0;  // its self time per call of the kernel
  double head_ms = 0;
  // Its part of the time the head added (head_ms - base_ms over the sum of every row's positive difference), or,
  // for a row that got faster, of the time the head saved (negative). 0 when nothing was added or saved.
  double share = 0;
  double delta_ms() const { return head_ms - base_ms; }
};

// Counts per call of the kernel that do not jitter (or barely): exact, no interval.
enum class count_kind {
  kernel_launches,     // device kernels launched (the profiler; GPU only)
  operator_calls,      // host operators called, nested ones included (the profiler)
  dram_bytes_read,     // Nsight Compute dram__bytes_read.sum over one call
  dram_bytes_written,  // dram__bytes_write.sum
  instructions,        // smsp__inst_executed.sum
  flops,               // the run documents' work (counted over the eager reference, or declared)
  bytes,
};
std::string_view to_string(count_kind k);  // "kernel_launches", ...
std::optional<count_kind> count_kind_from_string(std::string_view s);
std::string_view count_label(count_kind k);  // "kernel launches", "DRAM bytes read", ... for people

struct count_change {
  count_kind kind = count_kind::operator_calls;
  std::optional<double> base;  // absent where that side's count is unknown
  std::optional<double> head;
  // head / base - 1, exact; nullopt unless both are known and base > 0.
  std::optional<double> change() const;
};

// Whether a count is of what the head executed (launches, operator calls, DRAM bytes, instructions) rather than the
// reference's work the run documents carry (flops, bytes), which a rewrite inherits and so cannot move.
bool executed_count(count_kind k);
// Whether both sides are known and the count changed by more than `threshold` (a fraction; from zero: any rise).
bool count_moved(const count_change& c, double threshold);

struct explanation {
  explain_status status = explain_status::explained;
  std::string note;        // failed / over_budget: why; explained: "" or what the counts say about the time
  std::string profiler;    // "libtorch profiler" or "libtorch profiler, Nsight Compute"
  std::string ranked_by;   // "self CPU time" or "GPU kernel time"
  int profiled_calls = 0;  // kernel calls a side inside the profiled window
  double base_ms = 0;      // each side's profiled window over its calls (untimed: profiler overhead included)
  double head_ms = 0;
  std::vector<op_change> changes;  // what changed, ranked (at most max_changes)
  std::vector<count_change> counts;
  // Whether some count of work (launches, calls, DRAM bytes, instructions; not the reference's flops or bytes)
  // moved by more than the threshold.
  bool counts_moved = false;
  double count_threshold = 0;  // the threshold in force, a fraction
  double cost_s = 0;           // seconds spent profiling this configuration, both sides, every pass
};

inline constexpr std::size_t max_changes = 20;

boost::json::value to_json(const explanation& e);
// Throws rnx::error(invalid) naming `source` and the field.
explanation explanation_from_json(const boost::json::value& v, const std::string& source);

// The ranked lines people read ("aten::exp added: 0.0312 ms a call, 41% of the added time"), at most `top`.
std::vector<std::string> top_lines(const explanation& e, std::size_t top);
// "kernel launches 3 -> 4 (+33.3%)" for each known count.
std::vector<std::string> count_lines(const explanation& e);

}  // namespace rnx
