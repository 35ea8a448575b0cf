// The run statistic with its 95% interval (see run_statistic.hpp).
#include "rnx/stats/run_statistic.hpp"

#include "rnx/stats/changepoint.hpp"
#include "rnx/stats/summary.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <cmath>
#include <vector>

namespace rnx::stats {

namespace {

// Processes with at least one sample, as summarize_run counts them (groups that cover every sample).
std::size_t process_count(const sample_view& run) {
  std::int64_t total = 0;
  std::size_t count = 0;
  for (const auto g : run.groups) {
    total += g;
    if (g > 0) ++count;
  }
  return total == static_cast<std::int64_t>(run.samples.size()) ? count : 1;
}

}  // namespace

std::optional<run_statistic_interval> run_statistic(const sample_view& run) {
  const auto point = summarize_run(run);
  const auto stat = observed_statistic(run, statistic::median);
  if (!point || !stat) return std::nullopt;
  const double ms = *stat;  // the very double the verdict compares, not exp(log) of it
  const std::size_t processes = process_count(run);
  if (processes >= 2) {
    const boost::math::students_t t(static_cast<double>(processes - 1));
    const double half = boost::math::quantile(t, 0.975) * point->log_se;
    return run_statistic_interval{ms, ms * std::exp(-half), ms * std::exp(half)};
  }
  const auto ci = median_with_interval(std::vector<double>(run.samples.begin(), run.samples.end()));
  return run_statistic_interval{ms, ci.lo, ci.hi};
}

}  // namespace rnx::stats
