// rnx bisect's search against a scripted comparison: known per-commit times, a known interval half-width.
#include "bisect_search.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <set>
#include <vector>

namespace {

using namespace rnx::gate;

// Commit i takes times[i]; a comparison of (base, head) reports their exact ratio with a symmetric interval of
// `half_width` (a fraction) and the normal-approximation probability of exceeding 1 + threshold.
class scripted_measure final : public pair_measure {
 public:
  scripted_measure(std::vector<double> times, double half_width, double threshold)
      : times_(std::move(times)), half_width_(half_width), threshold_(threshold) {}

  step_estimate compare(std::size_t base, std::size_t head) override {
    REQUIRE(base < head);
    REQUIRE(head < times_.size());
    asked.push_back({base, head});
    step_estimate e;
    e.ratio = times_[head] / times_[base];
    e.lo = e.ratio * (1 - half_width_);
    e.hi = e.ratio * (1 + half_width_);
    const double sigma = half_width_ / 1.959964;
    const double z = (std::log(e.ratio) - std::log1p(threshold_)) / sigma;
    e.p_slower = 0.5 * std::erfc(-z / std::sqrt(2.0));
    return e;
  }

  std::vector<std::pair<std::size_t, std::size_t>> asked;

 private:
  std::vector<double> times_;
  double half_width_;
  double threshold_;
};

// `count` commits, each `step` slower than its parent where `slow` says so.
std::vector<double> times_with_steps(std::size_t count, const std::set<std::size_t>& slow, double step) {
  std::vector<double> t(count, 1.0);
  for (std::size_t i = 1; i < count; ++i) t[i] = t[i - 1] * (slow.count(i) ? 1 + step : 1.0);
  return t;
}

std::set<std::size_t> culprit_indexes(const bisect_outcome& o) {
  std::set<std::size_t> out;
  for (const auto& c : o.culprits) out.insert(c.index);
  return out;
}

}  // namespace

TEST_CASE("call_step: step, none and uncertain at the probability") {
  const bisect_policy policy{0.01, 0.95};
  step_estimate e;
  e.p_slower = 0.97;
  CHECK(call_step(e, policy) == step_call::step);
  e.p_slower = 0.03;
  CHECK(call_step(e, policy) == step_call::none);
  e.p_slower = 0.5;
  CHECK(call_step(e, policy) == step_call::uncertain);
  CHECK(to_string(step_call::uncertain) == "uncertain");
}

TEST_CASE("one 8% step at commit 11 of 16 is named in at most 5 paired runs") {
  // Commits 1..16 are indexes 0..15: commit 11 is index 10.
  scripted_measure m(times_with_steps(16, {10}, 0.08), 0.004, 0.01);
  const bisect_outcome o = bisect_range(16, m, {0.01, 0.95});
  CHECK(culprit_indexes(o) == std::set<std::size_t>{10});
  CHECK(o.paired_runs <= 5);
  CHECK(o.paired_runs == static_cast<int>(m.asked.size()));
  REQUIRE(o.culprits.size() == 1);
  CHECK(o.culprits[0].size.ratio == doctest::Approx(1.08));
  CHECK(o.whole_call == step_call::step);
}

TEST_CASE("five 1.5% steps among eight commits are five culprits, the doc commits none") {
  // Index 0 is the anchor; commits 1..8 with the slow ones at 1, 2, 4, 6, 7 (3, 5, 8 touch docs).
  const std::set<std::size_t> slow{1, 2, 4, 6, 7};
  scripted_measure m(times_with_steps(9, slow, 0.015), 0.003, 0.0075);
  const bisect_outcome o = bisect_range(9, m, {0.0075, 0.95});
  CHECK(culprit_indexes(o) == slow);
  for (const auto& c : o.culprits) CHECK(c.size.ratio == doctest::Approx(1.015).epsilon(1e-6));
  CHECK(o.whole.ratio == doctest::Approx(std::pow(1.015, 5)));
}

TEST_CASE("a flat range costs one paired run and names nobody") {
  scripted_measure m(times_with_steps(12, {}, 0.0), 0.004, 0.01);
  const bisect_outcome o = bisect_range(12, m, {0.01, 0.95});
  CHECK(o.culprits.empty());
  CHECK(o.paired_runs == 1);
  CHECK(o.whole_call == step_call::none);
}

TEST_CASE("a speed-up is not a culprit, and the step after it still is") {
  std::vector<double> t{1.0, 0.9, 0.9, 0.9, 0.9 * 1.2};
  scripted_measure m(t, 0.004, 0.01);
  const bisect_outcome o = bisect_range(t.size(), m, {0.01, 0.95});
  CHECK(culprit_indexes(o) == std::set<std::size_t>{4});
}

TEST_CASE("too wide an interval leaves the whole uncertain, and a leaning estimate is still followed") {
  // 3% in one commit, each comparison uncertain by +-5%: no call reaches the probability; the estimate leans.
  scripted_measure m(times_with_steps(4, {2}, 0.03), 0.05, 0.01);
  const bisect_outcome o = bisect_range(4, m, {0.01, 0.95});
  CHECK(o.whole_call == step_call::uncertain);
  REQUIRE(!o.culprits.empty());
  for (const auto& c : o.culprits) CHECK(c.call == step_call::uncertain);
  CHECK(culprit_indexes(o).count(2) == 1);
}

TEST_CASE("fewer than two revisions: nothing to compare") {
  scripted_measure m({1.0}, 0.004, 0.01);
  const bisect_outcome o = bisect_range(1, m, {0.01, 0.95});
  CHECK(o.comparisons.empty());
  CHECK(o.paired_runs == 0);
}
