// The profile diff of base against head, the counts beside it, and what the counts say about the decision.
#include "rnx/explain/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace rnx::explain {

namespace {

struct per_call {
  double calls = 0;
  double ms = 0;
};

std::map<std::string, per_call> rows_per_call(const optimize::op_profile& p) {
  std::map<std::string, per_call> out;
  const double calls = p.profiled_calls > 0 ? static_cast<double>(p.profiled_calls) : 1.0;
  for (const auto& r : p.ops) out[r.name] = {static_cast<double>(r.calls) / calls, r.self_ms / calls};
  return out;
}

double total_calls(const std::map<std::string, per_call>& rows) {
  double sum = 0;
  for (const auto& [name, r] : rows) sum += r.calls;
  return sum;
}

// Structural changes (a row on one side only, a different call count) before time alone, then by time moved.
int rank_class(change_kind k) { return k == change_kind::time ? 1 : 0; }

}  // namespace

explanation diff_profiles(const optimize::op_profile& base, const optimize::op_profile& head, double count_threshold) {
  explanation e;
  e.profiler = head.source;
  e.ranked_by = head.ranked_by;
  e.profiled_calls = static_cast<int>(std::min(base.profiled_calls, head.profiled_calls));
  e.base_ms = base.profiled_calls > 0 ? base.wall_ms / static_cast<double>(base.profiled_calls) : base.wall_ms;
  e.head_ms = head.profiled_calls > 0 ? head.wall_ms / static_cast<double>(head.profiled_calls) : head.wall_ms;
  e.count_threshold = count_threshold;
  const auto b = rows_per_call(base);
  const auto h = rows_per_call(head);
  std::map<std::string, std::pair<per_call, per_call>> both;
  std::map<std::string, int> present;  // 1 base, 2 head, 3 both
  for (const auto& [name, r] : b) both[name].first = r, present[name] |= 1;
  for (const auto& [name, r] : h) both[name].second = r, present[name] |= 2;
  double added = 0, saved = 0, larger_side = 0;
  for (const auto& [name, sides] : both) {
    const double d = sides.second.ms - sides.first.ms;
    (d > 0 ? added : saved) += std::fabs(d);
  }
  for (const auto& [name, r] : b) larger_side += r.ms;
  double head_sum = 0;
  for (const auto& [name, r] : h) head_sum += r.ms;
  larger_side = std::max(larger_side, head_sum);
  for (const auto& [name, sides] : both) {
    op_change c;
    c.name = name;
    c.base_calls = sides.first.calls;
    c.head_calls = sides.second.calls;
    c.base_ms = sides.first.ms;
    c.head_ms = sides.second.ms;
    const double d = c.delta_ms();
    c.share = d > 0 && added > 0 ? d / added : (d < 0 && saved > 0 ? d / saved : 0);
    if (present[name] == 2) {
      c.kind = change_kind::added;
    } else if (present[name] == 1) {
      c.kind = change_kind::removed;
    } else if (std::fabs(c.base_calls - c.head_calls) > 1e-9) {
      c.kind = change_kind::calls;
    } else {
      c.kind = change_kind::time;
      const bool noticeable =
          std::fabs(d) >= 0.05 * std::max(c.base_ms, c.head_ms) && std::fabs(d) >= 0.01 * larger_side;
      if (!noticeable) continue;
    }
    e.changes.push_back(std::move(c));
  }
  std::stable_sort(e.changes.begin(), e.changes.end(), [](const op_change& x, const op_change& y) {
    if (rank_class(x.kind) != rank_class(y.kind)) return rank_class(x.kind) < rank_class(y.kind);
    return std::fabs(x.delta_ms()) > std::fabs(y.delta_ms());
  });
  if (e.changes.size() > max_changes) e.changes.resize(max_changes);
  // On a GPU the profile's rows are device kernels (their calls are launches); on a CPU they are host operators.
  const bool kernels = head.ranked_by == "GPU kernel time" || base.ranked_by == "GPU kernel time";
  set_count(e, {kernels ? count_kind::kernel_launches : count_kind::operator_calls, total_calls(b), total_calls(h)});
  return e;
}

void set_count(explanation& e, count_change c) {
  auto it = std::find_if(e.counts.begin(), e.counts.end(), [&](const count_change& x) { return x.kind == c.kind; });
  if (it == e.counts.end()) {
    e.counts.push_back(c);
  } else {
    *it = c;
  }
  e.counts_moved = std::any_of(e.counts.begin(), e.counts.end(), [&](const count_change& x) {
    return executed_count(x.kind) && count_moved(x, e.count_threshold);
  });
}

void add_work_counts(explanation& e, const run_result* base, const run_result* head) {
  auto flops = [](const run_result* r) -> std::optional<double> {
    if (!r || !r->work || !r->work->flops) return std::nullopt;
    return static_cast<double>(*r->work->flops);
  };
  auto bytes = [](const run_result* r) -> std::optional<double> {
    if (!r || !r->work || !r->work->bytes) return std::nullopt;
    return static_cast<double>(*r->work->bytes);
  };
  // A count of nothing on both sides (no FLOPs the counter knows of) says nothing, and is left out.
  auto some = [](const std::optional<double>& b, const std::optional<double>& h) {
    return (b && *b > 0) || (h && *h > 0);
  };
  if (some(flops(base), flops(head))) set_count(e, {count_kind::flops, flops(base), flops(head)});
  if (some(bytes(base), bytes(head))) set_count(e, {count_kind::bytes, bytes(base), bytes(head)});
}

}  // namespace rnx::explain
