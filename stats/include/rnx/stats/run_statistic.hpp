// The statistic of one run of one configuration that the verdict compares, with a 95% interval: the number every
// page, chart and comparison shows for a run, so that they all say what the gate said.
//
//   std::vector<double> ms = {...};  std::vector<std::int64_t> groups = {40, 40, 40};
//   auto s = rnx::stats::run_statistic({ms, groups});   // s->ms: per-process median, geometric mean over processes
//   if (s) std::cout << s->ms << " ms (95%: " << s->lo_ms << " to " << s->hi_ms << ")\n";
#pragma once

#include "rnx/stats/posterior.hpp"

#include <optional>

namespace rnx::stats {

struct run_statistic_interval {
  double ms = 0;     // observed_statistic(run, median): the verdict's base_ms / head_ms for this run
  double lo_ms = 0;  // its 95% interval
  double hi_ms = 0;
};

// The run statistic and its interval. Over several processes: the mean of the log process medians (the statistic)
// plus or minus Student's t quantile with (processes - 1) degrees of freedom times its standard error
// (summarize_run), so a run whose processes disagree gets an interval as wide as their disagreement; for one
// process, the median's distribution-free interval. nullopt when the run has no positive statistic.
std::optional<run_statistic_interval> run_statistic(const sample_view& run);

}  // namespace rnx::stats
