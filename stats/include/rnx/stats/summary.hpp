// Plain sample summaries every component shares: the median, quantiles and the median's distribution-free 95%
// interval.
//
//   std::vector<double> ms = {3.1, 3.0, 3.2, 3.05, 3.15, 3.1, 3.08, 3.12};
//   double m = rnx::stats::median(ms);                       // 3.1
//   rnx::stats::median_interval ci = rnx::stats::median_with_interval(ms);
//   // ci.lo <= ci.median <= ci.hi, from order statistics; no assumption about the shape of the times
#pragma once

#include "rnx/common/order_statistics.hpp"

#include <vector>

namespace rnx::stats {

// The one median, upper median, quantile and MAD scale (common/include/rnx/common/order_statistics.hpp, below
// rnx::stats because common's shard split needs a median too).
using rnx::mad_to_sd;
using rnx::median;
using rnx::median_of_sorted;
using rnx::quantile;
using rnx::upper_median;
using rnx::upper_median_of_sorted;
using rnx::value_at_rank;

struct median_interval {
  double median;  // NaN when there are no values
  double lo;      // the 95% interval's order statistics, clamped to the sample
  double hi;
};

// The median and its distribution-free 95% interval: the order statistics of ranks (1-based)
// n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n), rounded outwards (the binomial(n, 1/2) normal approximation;
// 0.98 = 1.96 / 2), clamped to the sample.
median_interval median_with_interval(std::vector<double> values);

}  // namespace rnx::stats
