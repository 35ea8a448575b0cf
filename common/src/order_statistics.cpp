// The median, upper median and quantile (see order_statistics.hpp).
#include "rnx/common/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace rnx {

double median_of_sorted(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  return n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return median_of_sorted(values);
}

double upper_median_of_sorted(const std::vector<double>& sorted) {
  return sorted.empty() ? std::numeric_limits<double>::quiet_NaN() : sorted[sorted.size() / 2];
}

double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return upper_median_of_sorted(values);
}

double value_at_rank(std::vector<double>& values, double position, std::size_t first) {
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const double fraction = position - static_cast<double>(lower);
  const auto begin = values.begin();
  std::nth_element(begin + static_cast<std::ptrdiff_t>(first), begin + static_cast<std::ptrdiff_t>(lower),
                   values.end());
  const double low = values[lower];
  if (fraction == 0 || lower + 1 >= values.size()) return low;
  const double high = *std::min_element(begin + static_cast<std::ptrdiff_t>(lower) + 1, values.end());
  return low + fraction * (high - low);
}

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  return value_at_rank(values, q * static_cast<double>(values.size() - 1));
}

}  // namespace rnx
