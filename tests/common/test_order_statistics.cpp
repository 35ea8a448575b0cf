// rnx::median, upper_median, quantile and value_at_rank (common/include/rnx/common/order_statistics.hpp): where the
// averaging and the upper median part on an even count, numpy's linear quantile, and selection from a given rank.
#include "rnx/common/order_statistics.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

using namespace rnx;

TEST_CASE("median averages the middle two of an even count; upper_median takes the upper; both agree on odd") {
  const std::vector<double> even = {3.3, 3.0, 3.2, 3.1};
  CHECK(median(even) == doctest::Approx(3.15));
  CHECK(upper_median(even) == 3.2);
  const std::vector<double> odd = {5, 1, 3};
  CHECK(median(odd) == 3);
  CHECK(upper_median(odd) == 3);
  CHECK(std::isnan(median({})));
  CHECK(std::isnan(upper_median({})));
  CHECK(median_of_sorted({1, 2}) == 1.5);
  CHECK(upper_median_of_sorted({1, 2}) == 2);
}

TEST_CASE("quantile: linear between order statistics like numpy's default; the ends are the extremes") {
  const std::vector<double> v = {4, 1, 3, 2};
  CHECK(quantile(v, 0.05) == doctest::Approx(1.15));  // numpy.quantile([1, 2, 3, 4], 0.05)
  CHECK(quantile(v, 0.95) == doctest::Approx(3.85));
  CHECK(quantile(v, 0.5) == median(v));
  CHECK(quantile(v, 0) == 1);
  CHECK(quantile(v, 1) == 4);
  CHECK(quantile({7}, 0.3) == 7);
  CHECK(std::isnan(quantile({}, 0.5)));
}

TEST_CASE("value_at_rank: a fractional rank, and a rank counted from `first` after an earlier selection") {
  std::vector<double> v = {9, 0, 8, 1, 7, 2, 6, 3, 5, 4};
  CHECK(value_at_rank(v, 2.5) == 2.5);
  // Everything before rank 2 is now no greater than it: the upper end may be found among the rest.
  CHECK(value_at_rank(v, 7.25, 2) == doctest::Approx(7.25));
}
