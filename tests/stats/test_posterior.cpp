// Calibration, determinism and robustness of the Bayesian speed comparison (rnx::stats::compare_samples).
#include "rnx/stats/posterior.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

using rnx::decision;
using namespace rnx::stats;

namespace {

// Log-normal samples with a given coefficient of variation around `center`.
std::vector<double> lognormal(std::mt19937_64& rng, int n, double center, double cv) {
  const double sigma = std::sqrt(std::log(1 + cv * cv));
  std::normal_distribution<double> z(0.0, sigma);
  std::vector<double> out(static_cast<std::size_t>(n));
  for (auto& x : out) x = center * std::exp(z(rng));
  return out;
}

struct rates {
  double slower = 0;
  double faster = 0;
};

rates flat_rates(double change, int pairs) {
  std::mt19937_64 rng(20261202);
  int slower = 0;
  int faster = 0;
  comparison_options opt;
  for (int i = 0; i < pairs; ++i) {
    auto base = lognormal(rng, 30, 1.0, 0.03);
    auto head = lognormal(rng, 30, change, 0.03);
    auto c = compare_samples({base}, {head}, opt);
    slower += c.result == decision::slower;
    faster += c.result == decision::faster;
  }
  return {slower / static_cast<double>(pairs), faster / static_cast<double>(pairs)};
}

// Each process gets its own log-normal offset (sigma 5%) on top of 3% within-process noise.
std::pair<std::vector<double>, std::vector<std::int64_t>> drifting_side(std::mt19937_64& rng, int processes,
                                                                        int per_process, double change) {
  std::normal_distribution<double> offset(0.0, 0.05);
  std::vector<double> samples;
  std::vector<std::int64_t> groups;
  for (int p = 0; p < processes; ++p) {
    auto s = lognormal(rng, per_process, change * std::exp(offset(rng)), 0.03);
    samples.insert(samples.end(), s.begin(), s.end());
    groups.push_back(per_process);
  }
  return {samples, groups};
}

}  // namespace

TEST_CASE("calibration: log-normal noise, CV 3%, 30 samples a side, 1000 seeded pairs") {
  const rates same = flat_rates(1.0, 1000);
  const rates ten = flat_rates(1.10, 1000);
  const rates one = flat_rates(1.01, 1000);
  std::printf("calibration  identical: slower %.3f faster %.3f | +10%%: slower %.3f | +1%%: slower %.3f faster %.3f\n",
              same.slower, same.faster, ten.slower, one.slower, one.faster);
  CHECK(same.slower <= 0.01);
  CHECK(same.faster <= 0.01);
  CHECK(ten.slower >= 0.99);
  CHECK(one.slower + one.faster <= 0.05);
}

TEST_CASE("calibration under run-to-run drift: two-level posterior vs flat bootstrap") {
  for (int processes = 3; processes <= 5; ++processes) {
    std::mt19937_64 rng(7000 + static_cast<unsigned>(processes));
    const int pairs = 1000;
    int two_level_slower = 0;
    int two_level_faster = 0;
    int flat_slower = 0;
    int flat_faster = 0;
    comparison_options opt;
    for (int i = 0; i < pairs; ++i) {
      auto [bs, bg] = drifting_side(rng, processes, 10, 1.0);
      auto [hs, hg] = drifting_side(rng, processes, 10, 1.0);
      auto two = compare_samples({bs, bg}, {hs, hg}, opt);
      auto flat = compare_samples({bs, bg}, {hs, hg}, opt, /*flat=*/true);
      two_level_slower += two.result == decision::slower;
      two_level_faster += two.result == decision::faster;
      flat_slower += flat.result == decision::slower;
      flat_faster += flat.result == decision::faster;
    }
    std::printf(
        "drift %d processes a side, identical code: two-level slower %.3f faster %.3f | flat slower %.3f "
        "faster %.3f\n",
        processes, two_level_slower / double(pairs), two_level_faster / double(pairs), flat_slower / double(pairs),
        flat_faster / double(pairs));
    CHECK(two_level_slower <= pairs / 100);
    CHECK(two_level_faster <= pairs / 100);
    // The contrast the two-level posterior exists for: the flat bootstrap raises false alarms here.
    CHECK(flat_slower > two_level_slower);
  }
}

TEST_CASE("two-level posterior still detects a real 10% slowdown when processes agree") {
  std::mt19937_64 rng(99);
  int slower = 0;
  for (int i = 0; i < 200; ++i) {
    std::vector<double> base;
    std::vector<double> head;
    for (int p = 0; p < 3; ++p) {
      auto b = lognormal(rng, 10, 1.0, 0.01);
      auto h = lognormal(rng, 10, 1.10, 0.01);
      base.insert(base.end(), b.begin(), b.end());
      head.insert(head.end(), h.begin(), h.end());
    }
    std::vector<std::int64_t> groups = {10, 10, 10};
    slower += compare_samples({base, groups}, {head, groups}, {}).result == decision::slower;
  }
  CHECK(slower >= 198);
}

TEST_CASE("deterministic: the same samples give the same posterior, bit for bit") {
  std::mt19937_64 rng(5);
  auto base = lognormal(rng, 40, 1.0, 0.05);
  auto head = lognormal(rng, 40, 1.03, 0.05);
  auto a = compare_samples({base}, {head}, {});
  auto b = compare_samples({base}, {head}, {});
  CHECK(a.p_slower.value() == b.p_slower.value());
  CHECK(a.ci_lo.value() == b.ci_lo.value());
  CHECK(a.ci_hi.value() == b.ci_hi.value());
  // A different sample gives a different seed and (almost surely) different draws.
  head[0] *= 1.0001;
  auto c = compare_samples({base}, {head}, {});
  CHECK(c.ci_hi.value() != a.ci_hi.value());
}

TEST_CASE("a baseline's kept draws give the answer drawing them again gives") {
  // Baseline draws are kept across comparisons (the 256 most recent); reusing them must change no answer.
  std::mt19937_64 rng(8);
  auto base = lognormal(rng, 30, 1.0, 0.04);
  std::vector<std::int64_t> groups = {10, 10, 10};
  auto head = lognormal(rng, 30, 1.02, 0.04);
  auto first = compare_samples({base, groups}, {head, groups}, {});
  auto kept = compare_samples({base, groups}, {head, groups}, {});
  // 300 other baselines push this one out, so the next comparison draws it afresh.
  for (int i = 0; i < 300; ++i) {
    auto other = lognormal(rng, 30, 1.0, 0.04);
    compare_samples({other, groups}, {head, groups}, {});
  }
  auto redrawn = compare_samples({base, groups}, {head, groups}, {});
  for (const auto* c : {&kept, &redrawn}) {
    CHECK(c->p_slower.value() == first.p_slower.value());
    CHECK(c->p_faster.value() == first.p_faster.value());
    CHECK(c->ci_lo.value() == first.ci_lo.value());
    CHECK(c->ci_hi.value() == first.ci_hi.value());
  }
  // The same baseline against another head: its own answer, not the first one's.
  auto other_head = lognormal(rng, 30, 1.02, 0.04);
  auto second = compare_samples({base, groups}, {other_head, groups}, {});
  CHECK(second.ci_lo.value() != first.ci_lo.value());
}

TEST_CASE("identical samples on both sides still get independent draws") {
  // The base's seed comes from its data alone, the head's from both sides: the same varied samples on the
  // two sides must give a real interval around 1, not the degenerate one of identical draws.
  std::mt19937_64 rng(9);
  auto samples = lognormal(rng, 30, 1.0, 0.05);
  auto c = compare_samples({samples}, {samples}, {});
  CHECK(c.ratio.value() == 1.0);
  CHECK(c.ci_lo.value() < 0.995);
  CHECK(c.ci_hi.value() > 1.005);
}

TEST_CASE("central_interval equals the quantiles of a full sort, interpolation included") {
  // The fast path keeps only values near each end; the answer must be the very same numbers.
  auto reference = [](std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    auto at = [&](double position) {
      const auto lower = static_cast<std::size_t>(std::floor(position));
      const double fraction = position - static_cast<double>(lower);
      if (fraction == 0 || lower + 1 >= v.size()) return v[lower];
      return v[lower] + fraction * (v[lower + 1] - v[lower]);
    };
    const double last = static_cast<double>(v.size() - 1);
    return std::pair{at(q * last), at((1 - q) * last)};
  };
  std::mt19937_64 rng(21);
  std::normal_distribution<double> normal;
  int compared = 0;
  for (std::size_t n : {1u, 2u, 3u, 10u, 255u, 256u, 1000u, 2000u, 2001u, 20000u}) {
    for (double q : {0.0, 0.025, 0.1, 0.5}) {
      for (bool ties : {false, true}) {
        std::vector<double> v(n);
        for (auto& x : v) x = ties ? std::round(normal(rng) * 3) : normal(rng);
        if (n == 2000 && ties) std::sort(v.begin(), v.end());  // an ordered input: the pilot sees the extremes
        const auto expected = reference(v, q);
        auto work = v;
        const auto got = central_interval(work, q);
        CHECK(got.first == expected.first);
        CHECK(got.second == expected.second);
        ++compared;
      }
    }
  }
  CHECK(compared == 80);
  std::vector<double> none;
  CHECK(std::isnan(central_interval(none, 0.025).first));
}

TEST_CASE("outlier-robust: one huge sample does not change a median verdict") {
  std::mt19937_64 rng(11);
  auto base = lognormal(rng, 30, 1.0, 0.02);
  auto head = base;
  head[3] = 1000.0;
  auto c = compare_samples({base}, {head}, {});
  CHECK(c.result == decision::equivalent);
}

TEST_CASE("never throws on bad data: abstain with a reason") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> good(10, 1.0);
  std::vector<double> with_nan = good;
  with_nan[2] = nan;
  std::vector<double> negative = good;
  negative[0] = -1;
  std::vector<double> empty;
  std::vector<double> few(5, 1.0);
  std::vector<double> zeros(10, 0.0);

  auto nan_case = compare_samples({good}, {with_nan}, {});
  CHECK(nan_case.result == decision::abstain);
  CHECK(nan_case.reason.find("non-finite or negative") != std::string::npos);
  CHECK(compare_samples({negative}, {good}, {}).result == decision::abstain);
  auto empty_case = compare_samples({empty}, {good}, {});
  CHECK(empty_case.reason == "no samples in base");
  auto few_case = compare_samples({good}, {few}, {});
  CHECK(few_case.reason == "too few samples: head has 5, min_samples is 8");
  auto zero_case = compare_samples({zeros}, {good}, {});
  CHECK(zero_case.result == decision::abstain);
  CHECK(zero_case.reason.find("zero") != std::string::npos);
  std::vector<std::int64_t> bad_groups = {4, 4};
  auto groups_case = compare_samples({good, bad_groups}, {good}, {});
  CHECK(groups_case.reason == "base groups add up to 8 samples, not 10");
  sample_view unstable{good, {}, true, "process medians 0.73 ms and 18 ms"};
  auto unstable_case = compare_samples(unstable, {good}, {});
  CHECK(unstable_case.result == decision::abstain);
  CHECK(unstable_case.reason ==
        "base is unstable (process medians 0.73 ms and 18 ms); head 5-95% [1, 1] vs base [1, 1] overlap beyond the "
        "rope, so the change is not larger than the instability; to decide: measure paired (rnx bench --pair BASE, "
        "rnx gate --mode paired)");
}

TEST_CASE("an unstable side does not veto a change larger than the instability") {
  // Base bimodal: 60% near 1 ms, 40% near 3 ms (the slow mode of a bad worker). Head 3.5x the fast mode.
  std::vector<double> base, head, near_base;
  for (int i = 0; i < 30; ++i) base.push_back((i % 5 < 3 ? 1.0 : 3.0) * (1 + 0.01 * (i % 7)));
  for (int i = 0; i < 30; ++i) head.push_back(10.5 * (1 + 0.01 * (i % 7)));
  for (int i = 0; i < 30; ++i) near_base.push_back((i % 5 < 3 ? 1.1 : 3.3) * (1 + 0.01 * (i % 7)));
  const sample_view unstable{base, {}, true, "bimodal"};
  auto far = compare_samples(unstable, {head}, {});
  CHECK(far.result == decision::slower);
  CHECK(far.reason.find("the change is larger than the instability") != std::string::npos);
  // A 10% change inside a 3x bimodal spread is not decided: its 5-95% range overlaps the base's.
  auto near = compare_samples(unstable, {near_base}, {});
  CHECK(near.result == decision::abstain);
  CHECK(near.reason.find("not larger than the instability") != std::string::npos);
}

TEST_CASE("identical constant samples are equivalent with a degenerate interval") {
  std::vector<double> same(12, 2.5);
  auto c = compare_samples({same}, {same}, {});
  CHECK(c.result == decision::equivalent);
  CHECK(c.ratio.value() == doctest::Approx(1.0));
  CHECK(c.p_equivalent.value() == doctest::Approx(1.0));
}

TEST_CASE("mean statistic is selectable and sees a shift") {
  std::mt19937_64 rng(3);
  auto base = lognormal(rng, 50, 1.0, 0.02);
  auto head = lognormal(rng, 50, 0.8, 0.02);
  comparison_options opt;
  opt.stat = rnx::statistic::mean;
  auto c = compare_samples({base}, {head}, opt);
  CHECK(c.result == decision::faster);
  CHECK(c.ratio.value() == doctest::Approx(0.8).epsilon(0.02));
  CHECK(c.p_faster.value() > 0.99);
}

TEST_CASE("a slower whose two-sided interval reaches below 1.0 says which bound decided") {
  // Three processes a side; the head's process medians spread 5% apart, so the Student-t level has heavy tails:
  // the 2.5% quantile of the ratio falls below 1.0 while the 5% quantile, which the one-sided rule uses, stays
  // above 1.02.
  auto processes = [](std::vector<double> medians) {
    std::vector<double> samples;
    for (double m : medians) {
      for (int i = 0; i < 10; ++i) samples.push_back(m * (1 + 0.003 * std::sin(1.7 * i)));
    }
    return samples;
  };
  const std::vector<double> base = processes({1.0, 1.0, 1.0});
  const std::vector<double> head = processes({1.12 * std::exp(-0.05), 1.12, 1.12 * std::exp(0.05)});
  const std::vector<std::int64_t> groups = {10, 10, 10};
  const auto slower = compare_samples({base, groups}, {head, groups}, {});
  CHECK(slower.result == decision::slower);
  REQUIRE(slower.ci_lo.has_value());
  CHECK(*slower.ci_lo < 1.0);
  CHECK(slower.reason ==
        "one-sided rule: P(ratio > 1.020) = 0.958 >= 0.95, so the ratio's 5% quantile 1.029 is above 1.020; the "
        "two-sided 95% interval shown (low end 0.988) is not what decides");
  // The mirror image: faster, with the interval's high end above 1.0.
  const auto faster = compare_samples({head, groups}, {base, groups}, {});
  CHECK(faster.result == decision::faster);
  CHECK(faster.reason ==
        "one-sided rule: P(ratio < 0.980) = 0.959 >= 0.95, so the ratio's 95% quantile 0.970 is below 0.980; the "
        "two-sided 95% interval shown (high end 1.010) is not what decides");
  // A slower whose interval clears the band needs no explanation.
  const auto clear = compare_samples({base, groups}, {processes({1.3, 1.3, 1.3}), groups}, {});
  CHECK(clear.result == decision::slower);
  CHECK(clear.reason.empty());
}
