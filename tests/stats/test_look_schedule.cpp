// The alpha-spending schedule of the sequential looks (rnx::stats::look_thresholds): its thresholds, the error rate
// of the whole schedule in the model it is computed for, and the last look deciding an interval inside the band.
#include "rnx/stats/look_schedule.hpp"
#include "rnx/stats/posterior.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

using rnx::decision;
using namespace rnx::stats;

namespace {

// The share of `paths` simulated cumulative statistics (standard Brownian motion at equally spaced information
// fractions k / looks, the model the schedule is computed for) whose standardized value crosses look k's boundary,
// Phi^-1(threshold k), at some look: the false-decision rate of the whole schedule under no change.
double crossing_rate(const std::vector<double>& thresholds, int paths, std::uint64_t seed) {
  const auto looks = static_cast<int>(thresholds.size());
  std::vector<double> bounds;
  for (double t : thresholds) {
    double lo = -40, hi = 40;  // the normal quantile of t, by bisection
    for (int i = 0; i < 200; ++i) {
      const double mid = 0.5 * (lo + hi);
      (0.5 * std::erfc(-mid / std::sqrt(2.0)) < t ? lo : hi) = mid;
    }
    bounds.push_back(lo);
  }
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> increment(0.0, std::sqrt(1.0 / looks));
  int crossed = 0;
  for (int p = 0; p < paths; ++p) {
    double w = 0;
    for (int k = 1; k <= looks; ++k) {
      w += increment(rng);
      if (w / std::sqrt(static_cast<double>(k) / looks) > bounds[static_cast<std::size_t>(k - 1)]) {
        ++crossed;
        break;
      }
    }
  }
  return crossed / static_cast<double>(paths);
}

}  // namespace

TEST_CASE("one look needs the probability itself; a look index out of range is the last look") {
  CHECK(look_thresholds(0.95, 1) == std::vector<double>{0.95});
  CHECK(look_thresholds(0.9, 0) == std::vector<double>{0.9});
  CHECK(look_threshold(0.95, 0, 1) == 0.95);
  CHECK(look_threshold(0.95, 0, 4) == look_threshold(0.95, 4, 4));
  CHECK(look_threshold(0.95, 9, 4) == look_threshold(0.95, 4, 4));
  comparison_options one;
  CHECK(decision_threshold(one) == 0.95);
}

TEST_CASE("four looks at 0.95: nearly certainty first, close to 0.95 last, each stricter than the next") {
  const std::vector<double> t = look_thresholds(0.95, 4);
  REQUIRE(t.size() == 4);
  CHECK(t[0] > 0.9999);
  for (std::size_t k = 1; k < t.size(); ++k) CHECK(t[k] < t[k - 1]);
  // The values of the O'Brien-Fleming-type spending function at information fractions 1/4 .. 1 (one-sided 0.05).
  CHECK(t[1] == doctest::Approx(0.99455).epsilon(2e-4));
  CHECK(t[2] == doctest::Approx(0.97774).epsilon(5e-4));
  CHECK(t[3] > 0.95);
  CHECK(t[3] < 0.96);
  // Fewer looks leave the last one closer to the probability.
  CHECK(look_threshold(0.95, 0, 2) < look_threshold(0.95, 0, 3));
  CHECK(look_threshold(0.95, 0, 3) < t[3]);
  CHECK(look_threshold(0.95, 0, 2) < 0.953);
  // Another probability scales with it.
  CHECK(look_threshold(0.99, 0, 4) > 0.99);
  CHECK(look_threshold(0.99, 0, 4) < 0.992);
}

TEST_CASE("the whole schedule's false-decision rate is the probability's, where the split's was less") {
  const int paths = 200000;
  for (const int looks : {2, 4, 6}) {
    const double spending = crossing_rate(look_thresholds(0.95, looks), paths, 4600 + looks);
    const double split =
        crossing_rate(std::vector<double>(static_cast<std::size_t>(looks), 1 - 0.05 / looks), paths, 4600 + looks);
    const double plain = crossing_rate(std::vector<double>(static_cast<std::size_t>(looks), 0.95), paths, 4600 + looks);
    const std::vector<double> t = look_thresholds(0.95, looks);
    std::printf("%d looks: thresholds", looks);
    for (double x : t) std::printf(" %.5f", x);
    std::printf("; false-decision rate over the schedule: spending %.4f, split %.4f, 0.95 at every look %.4f\n",
                spending, split, plain);
    INFO("looks " << looks << ": spending " << spending << ", split " << split << ", 0.95 at every look " << plain);
    // 200,000 paths: the rate's standard error is 0.0005.
    CHECK(spending == doctest::Approx(0.05).epsilon(0.04));
    CHECK(split < spending);
    CHECK(plain > 0.06);
  }
}

TEST_CASE("an interval inside the band decides equivalent at the last look, where the split threshold abstained") {
  // Six processes whose block ratios are their process's ratio exactly, spread symmetrically around 1 by `a`: the
  // posterior is the Student-t level alone. The spread is widened until P(equivalent) falls between the last look's
  // threshold and the split 0.9875 (the case of an unchanged pull request that ended WARN).
  const double last = look_threshold(0.95, 0, 4);
  bool found = false;
  for (double a = 0.002; a < 0.03 && !found; a += 0.0002) {
    std::vector<double> base, head;
    std::vector<std::int64_t> groups;
    for (const double d : {1.0, -1.0, 0.6, -0.6, 0.2, -0.2}) {
      for (int i = 0; i < 16; ++i) {
        base.push_back(1.0);
        head.push_back(std::exp(a * d));
      }
      groups.push_back(16);
    }
    comparison_options opt;
    opt.looks = 4;
    const comparison c = compare_paired({base, head, groups, 4}, opt);
    REQUIRE(c.p_equivalent.has_value());
    if (*c.p_equivalent < last + 0.003 || *c.p_equivalent > 0.98) continue;
    found = true;
    INFO("spread " << a << ": P(equivalent) " << *c.p_equivalent << ", interval " << *c.ci_lo << " " << *c.ci_hi);
    CHECK(c.result == decision::equivalent);
    CHECK(c.threshold == doctest::Approx(last));
    CHECK(*c.ci_lo > 0.98);
    CHECK(*c.ci_hi < 1.02);
    // The same samples at the first look, and under the split threshold of today's rule before it: no decision.
    opt.look = 1;
    CHECK(compare_paired({base, head, groups, 4}, opt).result == decision::abstain);
    comparison_options split;
    split.probability = 1 - 0.05 / 4;
    CHECK(compare_paired({base, head, groups, 4}, split).result == decision::abstain);
  }
  CHECK(found);
}
