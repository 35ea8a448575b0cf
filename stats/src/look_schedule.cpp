// The thresholds of an O'Brien-Fleming-type alpha-spending schedule, computed by numerical integration.
#include "rnx/stats/look_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <utility>

namespace rnx::stats {

namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The x with normal_cdf(x) = p, by bisection (called once per schedule, so its cost does not matter).
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// The error spent by information fraction t: 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)), alpha at t = 1.
double spent(double alpha, double t) {
  const double z = normal_quantile(1 - alpha / 2);
  return std::erfc(z / std::sqrt(2 * t));
}

// The statistic at look k is W(t_k) / sqrt(t_k) for a standard Brownian motion W under no change (a cumulative
// statistic over independent increments of information). The density of W(t_k) on the paths that crossed no
// earlier boundary is carried on a grid of cells of width `step` (midpoint rule); each boundary is where the mass
// above it equals that look's share of the error.
class crossing_density {
 public:
  static constexpr double step = 0.01;
  static constexpr double reach = 9;  // W(t) for t <= 1 lies within 9 standard deviations

  crossing_density() : values_(static_cast<std::size_t>(2 * reach / step) + 1) {}

  double at(std::size_t i) const { return -reach + step * static_cast<double>(i); }

  // The density of W(t) with nothing crossed yet.
  void start(double t) {
    for (std::size_t i = 0; i < values_.size(); ++i)
      values_[i] = std::exp(-at(i) * at(i) / (2 * t)) / std::sqrt(2 * M_PI * t);
  }

  // The mass above `bound`: each cell [s - step/2, s + step/2] counts by the part of it above the bound.
  double mass_above(double bound) const {
    double mass = 0;
    for (std::size_t i = 0; i < values_.size(); ++i) mass += values_[i] * above(i, bound) * step;
    return mass;
  }

  // The bound whose mass above is `share` (+infinity where the share is nil).
  double bound_for(double share) const {
    if (!(share > 1e-15)) return INFINITY;
    double lo = -reach, hi = reach;
    for (int i = 0; i < 80; ++i) {
      const double mid = 0.5 * (lo + hi);
      (mass_above(mid) > share ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  }

  // The paths below `bound` carried on by a further `elapsed` of information (the next look's density).
  void advance(double bound, double elapsed) {
    const auto n = static_cast<std::ptrdiff_t>(values_.size());
    const auto width = static_cast<std::ptrdiff_t>(std::ceil(10 * std::sqrt(elapsed) / step));
    std::vector<double> kernel(static_cast<std::size_t>(2 * width + 1));
    for (std::ptrdiff_t m = -width; m <= width; ++m) {
      const double x = static_cast<double>(m) * step;
      kernel[static_cast<std::size_t>(m + width)] = std::exp(-x * x / (2 * elapsed)) / std::sqrt(2 * M_PI * elapsed);
    }
    std::vector<double> kept(values_.size());
    for (std::size_t i = 0; i < values_.size(); ++i) kept[i] = values_[i] * (1 - above(i, bound)) * step;
    std::vector<double> next(values_.size(), 0.0);
    for (std::ptrdiff_t j = 0; j < n; ++j) {
      double sum = 0;
      for (std::ptrdiff_t i = std::max<std::ptrdiff_t>(0, j - width); i <= std::min(n - 1, j + width); ++i) {
        sum += kept[static_cast<std::size_t>(i)] * kernel[static_cast<std::size_t>(j - i + width)];
      }
      next[static_cast<std::size_t>(j)] = sum;
    }
    values_ = std::move(next);
  }

 private:
  // The part of cell i above `bound`, 0 to 1.
  double above(std::size_t i, double bound) const {
    const double top = at(i) + step / 2;
    return std::clamp((top - bound) / step, 0.0, 1.0);
  }

  std::vector<double> values_;
};

std::vector<double> compute(double probability, int looks) {
  const double alpha = 1 - probability;
  std::vector<double> out;
  if (looks <= 1 || !(alpha > 0)) return std::vector<double>(static_cast<std::size_t>(std::max(looks, 1)), probability);
  crossing_density density;
  double spent_before = 0;  // the error spent up to the previous look
  for (int k = 1; k <= looks; ++k) {
    const double t = static_cast<double>(k) / looks;
    if (k == 1) density.start(t);
    const double spent_now = k == looks ? alpha : spent(alpha, t);
    const double bound = density.bound_for(spent_now - spent_before);
    out.push_back(std::isinf(bound) ? 1.0 : normal_cdf(bound / std::sqrt(t)));
    if (k < looks) {
      const double next = static_cast<double>(k + 1) / looks;
      density.advance(bound, next - t);
    }
    spent_before = spent_now;
  }
  return out;
}

}  // namespace

std::vector<double> look_thresholds(double probability, int looks) {
  static std::mutex mutex;
  static std::map<std::pair<double, int>, std::vector<double>> kept;
  const auto key = std::make_pair(probability, std::max(looks, 1));
  {
    std::lock_guard lock(mutex);
    if (auto it = kept.find(key); it != kept.end()) return it->second;
  }
  auto thresholds = compute(probability, key.second);
  std::lock_guard lock(mutex);
  return kept.emplace(key, std::move(thresholds)).first->second;
}

double look_threshold(double probability, int look, int looks) {
  const auto thresholds = look_thresholds(probability, looks);
  if (look < 1 || look > static_cast<int>(thresholds.size())) return thresholds.back();
  return thresholds[static_cast<std::size_t>(look - 1)];
}

}  // namespace rnx::stats
