// The median's order-statistic interval (see summary.hpp).
#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace rnx::stats {

median_interval median_with_interval(std::vector<double> values) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  if (values.empty()) return {nan, nan, nan};
  std::sort(values.begin(), values.end());
  const double n = static_cast<double>(values.size());
  const double half = 0.98 * std::sqrt(n);
  // 1-based ranks j and k; the 0-based indices are j - 1 and k - 1.
  const auto j = static_cast<std::ptrdiff_t>(std::floor(n / 2 - half));
  const auto k = static_cast<std::ptrdiff_t>(std::ceil(1 + n / 2 + half));
  const auto last = static_cast<std::ptrdiff_t>(values.size()) - 1;
  const auto lo = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(j - 1, 0, last));
  const auto hi = static_cast<std::size_t>(std::clamp<std::ptrdiff_t>(k - 1, 0, last));
  return {median_of_sorted(values), values[lo], values[hi]};
}

}  // namespace rnx::stats
