// Change points in a configuration's history (rnx::stats::find_change_points): a clear step is found where it is
// with its size, flat noise gives none, and what the store announces once stays announced once.
#include "rnx/stats/changepoint.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <iostream>
#include <random>
#include <vector>

using namespace rnx::stats;

namespace {

// A history of `runs` log statistics with normal noise of `sd`, multiplied by `step` from run `at` on.
std::vector<run_point> history(std::mt19937_64& rng, int runs, double sd, int at, double step) {
  std::normal_distribution<double> noise(0.0, sd);
  std::vector<run_point> out;
  out.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i) out.push_back({std::log(2.0) + (i >= at ? std::log(step) : 0.0) + noise(rng), sd});
  return out;
}

}  // namespace

TEST_CASE("a 5% step in 0.5% noise is found at its run with its size") {
  std::mt19937_64 rng(7);
  const auto h = history(rng, 40, 0.005, 25, 1.05);
  const auto scan = find_change_points(h);
  REQUIRE(scan.changes.size() == 1);
  const auto& c = scan.changes.front();
  CHECK(c.index == 25);
  CHECK(c.slower());
  CHECK(c.ratio == doctest::Approx(1.05).epsilon(0.01));
  CHECK(c.ci_lo < 1.05);
  CHECK(c.ci_hi > 1.05);
  CHECK(c.ci_lo > 1.03);
  CHECK(c.probability > 0.99);
  CHECK(c.n_before == 25);
  CHECK(c.n_after == 15);
  CHECK(scan.noise == doctest::Approx(0.005).epsilon(0.5));
}

TEST_CASE("a speed-up is a change point too, with a ratio below 1") {
  std::mt19937_64 rng(11);
  const auto scan = find_change_points(history(rng, 30, 0.005, 12, 0.9));
  REQUIRE(scan.changes.size() == 1);
  CHECK(scan.changes.front().index == 12);
  CHECK_FALSE(scan.changes.front().slower());
  CHECK(scan.changes.front().ratio == doctest::Approx(0.9).epsilon(0.01));
}

TEST_CASE("flat noise gives no change point, over 200 histories") {
  std::mt19937_64 rng(20261203);
  int found = 0;
  for (int i = 0; i < 200; ++i) {
    found += static_cast<int>(find_change_points(history(rng, 60, 0.01, 60, 1.0)).changes.size());
  }
  CHECK(found == 0);
}

TEST_CASE("two steps are two change points") {
  std::mt19937_64 rng(3);
  auto h = history(rng, 45, 0.004, 15, 1.04);
  for (std::size_t i = 30; i < h.size(); ++i) h[i].log_stat += std::log(1.03);
  const auto scan = find_change_points(h);
  REQUIRE(scan.changes.size() == 2);
  CHECK(scan.changes[0].index == 15);
  CHECK(scan.changes[1].index == 30);
  CHECK(scan.changes[1].ratio == doctest::Approx(1.03).epsilon(0.01));
}

TEST_CASE("one far-off newest run beside a normal one is an outlier, not a change point") {
  std::mt19937_64 rng(5);
  auto h = history(rng, 30, 0.005, 30, 1.0);
  h.back().log_stat += std::log(1.5);
  CHECK(find_change_points(h).changes.empty());
}

TEST_CASE("one wild run inside the history is an outlier, not two change points") {
  for (const int at : {12, 20, 27}) {  // the middle, and with only two runs after it
    std::mt19937_64 rng(static_cast<std::uint64_t>(at));
    auto h = history(rng, 30, 0.005, 30, 1.0);
    h[static_cast<std::size_t>(at)].log_stat += std::log(1.08);  // 16 standard deviations
    const auto scan = find_change_points(h);
    CHECK_MESSAGE(scan.changes.empty(), "wild run at ", at);
    CHECK(scan.noise < 0.0075);
  }
}

TEST_CASE("one wild run right after a step leaves the step found") {
  std::mt19937_64 rng(23);
  auto h = history(rng, 40, 0.005, 25, 1.04);
  h[26].log_stat += std::log(1.3);
  const auto scan = find_change_points(h);
  REQUIRE(scan.changes.size() == 1);
  CHECK(scan.changes.front().index == 25);
  CHECK(scan.changes.front().ratio == doctest::Approx(1.04).epsilon(0.01));
}

TEST_CASE("a 3% step after a stretch of noisy runs is still found") {
  std::mt19937_64 rng(29);
  auto h = history(rng, 50, 0.004, 40, 1.03);
  std::normal_distribution<double> burst(0.0, 0.03);
  for (std::size_t i = 5; i < 14; ++i) {  // 7 times the noise, and the runs say so
    h[i].log_stat += burst(rng);
    h[i].log_se = 0.03;
  }
  const auto scan = find_change_points(h);
  REQUIRE(scan.changes.size() == 1);
  CHECK(scan.changes.front().index == 40);
  CHECK(scan.changes.front().slower());
}

TEST_CASE("the noise estimate is not inflated by a step or by runs with a large uncertainty of their own") {
  std::mt19937_64 rng(31);
  const auto stepped = find_change_points(history(rng, 60, 0.005, 30, 1.2));
  REQUIRE(stepped.changes.size() == 1);
  CHECK(stepped.noise == doctest::Approx(0.005).epsilon(0.2));
  // Runs that report a wide uncertainty and are that noisy: their own variance explains them, the rest stays 0.5%.
  auto h = history(rng, 60, 0.005, 60, 1.0);
  std::normal_distribution<double> wide(0.0, 0.05);
  for (std::size_t i = 10; i < h.size(); i += 10) {
    h[i].log_stat += wide(rng);
    h[i].log_se = 0.05;
  }
  const auto scan = find_change_points(h);
  CHECK(scan.changes.empty());
  CHECK(scan.noise == doctest::Approx(0.005).epsilon(0.2));
}

namespace {

// The same history with no uncertainty of the runs' own: the noise is then measured from the scatter alone.
std::vector<run_point> without_own_uncertainty(std::vector<run_point> h) {
  for (auto& p : h) p.log_se = 0;
  return h;
}

}  // namespace

TEST_CASE("the newest runs of a step do not inflate the noise they are judged against") {
  std::mt19937_64 rng(41);
  const auto flat = without_own_uncertainty(history(rng, 43, 0.005, 43, 1.0));
  auto stepped = flat;
  for (std::size_t i = 40; i < stepped.size(); ++i) stepped[i].log_stat += std::log(1.03);  // 6 noise sds
  const auto with_step = find_change_points(stepped);
  const auto without = find_change_points(flat);
  CHECK(with_step.noise == doctest::Approx(without.noise).epsilon(1e-9));
  CHECK(with_step.noise == doctest::Approx(0.005).epsilon(0.25));
  REQUIRE(with_step.changes.size() == 1);
  CHECK(with_step.changes.front().index == 40);
  CHECK(without.changes.empty());
}

TEST_CASE("the noise estimate rests on every run's distance to its level, not on differences alone") {
  // Over 400 flat histories of 43 runs, the estimated variance over the true one, with the second estimate and with
  // the first pass alone (successive differences): both about unbiased, the second with a clearly smaller spread.
  // A variance estimated on k degrees of freedom has a ratio with spread sqrt(2 / k): printed as k.
  const auto spread = [](bool second_pass) {
    std::mt19937_64 rng(43);
    change_options opt;
    opt.second_pass = second_pass;
    std::vector<double> ratios;
    for (int i = 0; i < 400; ++i) {
      const double noise = find_change_points(without_own_uncertainty(history(rng, 43, 0.005, 43, 1.0)), opt).noise;
      ratios.push_back(noise * noise / (0.005 * 0.005));
    }
    double mean = 0, square = 0;
    for (double r : ratios) mean += r / static_cast<double>(ratios.size());
    for (double r : ratios) square += (r - mean) * (r - mean) / static_cast<double>(ratios.size() - 1);
    return std::pair{mean, std::sqrt(square)};
  };
  const auto [mean, sd] = spread(true);
  const auto [first_mean, first_sd] = spread(false);
  std::cout << "noise estimate over 400 flat histories of 43 runs, variance ratio: second pass mean " << mean << " sd "
            << sd << " (about " << std::lround(2 / (sd * sd)) << " degrees of freedom) | first pass alone mean "
            << first_mean << " sd " << first_sd << " (about " << std::lround(2 / (first_sd * first_sd)) << ")\n";
  CHECK(mean > 0.85);
  CHECK(mean < 1.1);
  CHECK(first_mean > 0.85);
  CHECK(first_mean < 1.1);
  CHECK(sd < 0.85 * first_sd);
}

TEST_CASE("a run whose processes agreed by luck does not decide a step alone") {
  std::mt19937_64 rng(37);
  auto h = history(rng, 30, 0.005, 30, 1.0);
  h[28].log_se = 0.0001;  // a 0.01% spread: its weight stays the typical run's
  h[28].log_stat += std::log(1.01);
  h[29].log_stat += std::log(1.01);
  CHECK(find_change_points(h).changes.empty());
}

TEST_CASE("short or degenerate histories give nothing and do not throw") {
  CHECK(find_change_points(std::vector<run_point>{}).changes.empty());
  std::vector<run_point> few(5, run_point{1.0, 0.01});
  CHECK(find_change_points(few).changes.empty());
  std::vector<run_point> same(20, run_point{1.0, 0.0});
  CHECK(find_change_points(same).changes.empty());
  same[3].log_stat = std::nan("");
  CHECK(find_change_points(same).changes.empty());
}

TEST_CASE("a step is announced once while more runs arrive") {
  std::mt19937_64 rng(17);
  const auto h = history(rng, 50, 0.005, 30, 1.04);
  std::vector<known_change> known;
  int announced = 0;
  for (std::size_t look = 1; look <= h.size(); ++look) {
    const auto scan = find_change_points(std::span(h.data(), look));
    for (const auto& c : unknown_changes(scan.changes, known)) {
      known.push_back({c.index, c.slower()});
      ++announced;
    }
  }
  CHECK(announced == 1);
  REQUIRE(known.size() == 1);
  CHECK(known.front().index >= 29);
  CHECK(known.front().index <= 31);
}

TEST_CASE("summarize_run: the verdict's statistic and the spread of its processes") {
  std::vector<double> samples = {1.0, 1.0, 1.0, 1.1, 1.1, 1.1, 1.2, 1.2, 1.2};
  std::vector<std::int64_t> groups = {3, 3, 3};
  const auto p = summarize_run({samples, groups});
  REQUIRE(p);
  const double mean = (std::log(1.0) + std::log(1.1) + std::log(1.2)) / 3;
  CHECK(p->log_stat == doctest::Approx(mean));
  double ss = 0;
  for (double x : {1.0, 1.1, 1.2}) ss += (std::log(x) - mean) * (std::log(x) - mean);
  CHECK(p->log_se == doctest::Approx(std::sqrt(ss / 2 / 3)));
  CHECK_FALSE(summarize_run({std::vector<double>{}}));
  const auto old = point_from_interval(2.0, 1.9, 2.1);
  REQUIRE(old);
  CHECK(old->log_se == doctest::Approx((std::log(2.1) - std::log(1.9)) / 4));
}
