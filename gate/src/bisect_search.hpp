// The search of `rnx bisect`: which commits of a linear range made a configuration slower, found by splitting the
// range on paired comparisons. The measurement is behind an interface, so the search is tested without a runner.
//
//   struct my_measure : rnx::gate::pair_measure { step_estimate compare(std::size_t, std::size_t) override; };
//   bisect_outcome out = bisect_range(commits.size(), measure, {.threshold = 0.0075, .probability = 0.95});
//   for (const auto& c : out.culprits) std::cout << commits[c.index] << " x" << c.size.ratio << "\n";
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::gate {

// What one comparison says about "the later revision is slower than the earlier one by more than the threshold".
enum class step_call { step, none, uncertain };
std::string_view to_string(step_call call);

// head/base ratio of the configuration's statistic between two revisions of the range.
struct step_estimate {
  double ratio = 1;
  double lo = 1;  // 95% interval of the ratio
  double hi = 1;
  double p_slower = 0;   // posterior probability that the ratio exceeds 1 + threshold
  bool measured = true;  // false: inferred as the quotient of two other comparisons (no run of its own)
  bool reused = false;   // measured by an earlier bisect (a cached paired run), not in this one
  std::string evidence;  // where the paired run documents are, "" when inferred
};

// Compares revision `head` with revision `base` (indexes into the range, base < head), paired.
class pair_measure {
 public:
  virtual ~pair_measure() = default;
  virtual step_estimate compare(std::size_t base, std::size_t head) = 0;
};

struct bisect_policy {
  double threshold = 0.0075;  // a step is a slowdown above this fraction
  double probability = 0.95;  // posterior probability needed to call a step, or to rule one out
};

// step when P(ratio > 1 + threshold) >= probability; none when P(ratio <= 1 + threshold) >= probability;
// otherwise uncertain.
step_call call_step(const step_estimate& e, const bisect_policy& policy);

struct bisect_comparison {
  std::size_t base = 0;
  std::size_t head = 0;
  step_estimate estimate;
  step_call call = step_call::uncertain;
};

struct bisect_culprit {
  std::size_t index = 0;             // the commit (index into the range) whose own change is the step
  step_estimate size;                // the culprit against its parent
  step_call call = step_call::step;  // uncertain: the evidence leaned towards a step without reaching probability
};

struct bisect_outcome {
  step_estimate whole;  // the first revision against the last
  step_call whole_call = step_call::uncertain;
  std::vector<bisect_culprit> culprits;        // in range order
  std::vector<bisect_comparison> comparisons;  // every comparison, in the order made (inferred ones too)
  int paired_runs = 0;                         // comparisons measured in this bisect
  int reused_runs = 0;                         // comparisons taken from earlier paired runs
};

// Range: revisions 0 (good) .. count-1 (bad), each the first parent of the next. Compares 0 with count-1; when that
// is a step (or leans to one), splits the range in halves recursively. A half whose first half rules out a step
// inherits the whole step without a run of its own; the second half is measured only when the first half does not
// explain the whole (the quotient of the two still exceeds the threshold), so one step costs about log2(count) + 1
// paired runs and several steps are each found and sized, not merged into one.
bisect_outcome bisect_range(std::size_t count, pair_measure& measure, const bisect_policy& policy);

}  // namespace rnx::gate
