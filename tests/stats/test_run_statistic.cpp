// rnx::stats::run_statistic: the verdict's statistic of one run with its 95% interval.
#include "rnx/stats/run_statistic.hpp"
#include "rnx/stats/summary.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace rnx;

namespace {

// 20 samples per process around each median, 0.2% apart.
std::vector<double> processes_around(const std::vector<double>& medians) {
  std::vector<double> out;
  for (double m : medians) {
    for (int i = 0; i < 20; ++i) out.push_back(m * (1 + 0.002 * (i - 10)));
  }
  return out;
}

}  // namespace

TEST_CASE("run_statistic: the verdict's statistic, exactly, with an interval as wide as its processes disagree") {
  const std::vector<std::int64_t> groups{20, 20, 20};
  const auto steady = processes_around({0.080, 0.081, 0.079});
  const auto noisy = processes_around({0.080, 23.99, 0.079});
  for (const auto* samples : {&steady, &noisy}) {
    const stats::sample_view run{*samples, groups};
    auto s = stats::run_statistic(run);
    REQUIRE(s.has_value());
    CHECK(s->ms == stats::observed_statistic(run, statistic::median).value());
    CHECK(s->lo_ms < s->ms);
    CHECK(s->hi_ms > s->ms);
  }
  auto calm = stats::run_statistic({steady, groups}).value();
  auto wild = stats::run_statistic({noisy, groups}).value();
  CHECK(wild.ms == doctest::Approx(std::cbrt(0.080 * 23.99 * 0.079)).epsilon(0.002));
  CHECK(calm.hi_ms / calm.lo_ms < 1.1);
  CHECK(wild.hi_ms / wild.lo_ms > 100);  // three processes 300x apart: no tight interval
}

TEST_CASE("run_statistic: one process is its median with the median's order-statistic interval; none is nullopt") {
  std::vector<double> samples{3.1, 3.0, 3.2, 3.05, 3.15, 3.1, 3.08, 3.12, 3.11, 3.09};
  auto s = stats::run_statistic({samples});
  REQUIRE(s.has_value());
  auto ci = stats::median_with_interval(samples);
  CHECK(s->ms == ci.median);
  CHECK(s->lo_ms == ci.lo);
  CHECK(s->hi_ms == ci.hi);
  CHECK_FALSE(stats::run_statistic({std::vector<double>{}}).has_value());
}
