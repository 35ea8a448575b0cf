// Plain sample summaries every component shares: the median and its distribution-free 95% interval.
//
//   std::vector<double> ms = {3.1, 3.0, 3.2, 3.05, 3.15, 3.1, 3.08, 3.12};
//   double m = rnx::stats::median(ms);                       // 3.1
//   rnx::stats::median_interval ci = rnx::stats::median_with_interval(ms);
//   // ci.lo <= ci.median <= ci.hi, from order statistics; no assumption about the shape of the times
#pragma once

#include <vector>

namespace rnx::stats {

// Median of already sorted values; NaN when empty.
double median_of_sorted(const std::vector<double>& sorted);

// Median of the values (NaN when empty); the argument is copied because it is sorted.
double median(std::vector<double> values);

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
