// The one median, quantile and MAD scale of rnx, for every component (common's shard split included, which is why
// they live below rnx::stats; rnx/stats/summary.hpp names them rnx::stats::median and so on).
//
//   std::vector<double> ms = {3.0, 3.1, 3.3, 3.2};
//   rnx::median(ms);          // 3.15: the mean of the two middle values
//   rnx::upper_median(ms);    // 3.2: the upper of them, always one of the values
//   rnx::quantile(ms, 0.05);  // 3.015: linear between order statistics, like numpy's default
#pragma once

#include <cstddef>
#include <vector>

namespace rnx {

// A normal sample's standard deviation is about this times its median absolute deviation (1 / Phi^-1(3/4)).
inline constexpr double mad_to_sd = 1.4826;

// Median of already sorted values, the mean of the two middle ones for an even count; NaN when empty.
double median_of_sorted(const std::vector<double>& sorted);

// Median of the values (NaN when empty); the argument is copied because it is sorted.
double median(std::vector<double> values);

// The value of rank n / 2 (0-based) of already sorted values: the median for an odd count, the upper of the two
// middle values for an even one, so always one of the values; NaN when empty.
double upper_median_of_sorted(const std::vector<double>& sorted);

// upper_median_of_sorted of the values, sorted here.
double upper_median(std::vector<double> values);

// The value at fractional 0-based rank `position` of values[first, end), linear between the order statistics
// around it, found by partial selection: values is reordered (every element before the position ends up no
// greater than it). `position` counts from values.begin() and is at least `first`. The core of quantile(), and
// of rnx::stats::central_interval over many draws.
double value_at_rank(std::vector<double>& values, double position, std::size_t first = 0);

// The q-quantile (0 <= q <= 1) linear between neighbouring order statistics, like numpy's default quantile; NaN
// when empty.
double quantile(std::vector<double> values, double q);

}  // namespace rnx
