// Change points over a history of run statistics (see changepoint.hpp; the method is in docs/statistics.md).
#include "rnx/stats/changepoint.hpp"

#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>

namespace rnx::stats {

namespace {

// Below this the standard deviation of a log statistic (0.01%) is treated as this: identical values still have
// a finite weight.
constexpr double min_variance = 1e-8;

// Prefix sums of w, w*y and w*y^2: the weighted Gaussian cost of any segment in O(1).
class segment_costs {
 public:
  segment_costs(const std::vector<double>& y, const std::vector<double>& w)
      : w_(y.size() + 1, 0.0), wy_(y.size() + 1, 0.0), wyy_(y.size() + 1, 0.0) {
    for (std::size_t i = 0; i < y.size(); ++i) {
      w_[i + 1] = w_[i] + w[i];
      wy_[i + 1] = wy_[i] + w[i] * y[i];
      wyy_[i + 1] = wyy_[i] + w[i] * y[i] * y[i];
    }
  }
  // Weighted sum of squared deviations from the segment's weighted mean, runs [s, t).
  double cost(std::size_t s, std::size_t t) const {
    const double w = w_[t] - w_[s];
    const double wy = wy_[t] - wy_[s];
    return std::max(0.0, (wyy_[t] - wyy_[s]) - wy * wy / w);
  }
  double mean(std::size_t s, std::size_t t) const { return (wy_[t] - wy_[s]) / (w_[t] - w_[s]); }
  double weight(std::size_t s, std::size_t t) const { return w_[t] - w_[s]; }

 private:
  std::vector<double> w_, wy_, wyy_;
};

double median_of(std::vector<double> values) { return median(std::move(values)); }

// The between-run variance of the log statistic beyond what each run's own uncertainty explains, from successive
// differences: a step moves one difference and a ramp all of them alike, so the median absolute deviation of the
// differences about their median is the noise alone. Returns (extra variance, total variance of one run).
std::pair<double, double> between_run_variance(const std::vector<double>& y, double typical_own_variance) {
  std::vector<double> diffs;
  for (std::size_t i = 1; i < y.size(); ++i) diffs.push_back(y[i] - y[i - 1]);
  const double center = median_of(diffs);
  for (auto& d : diffs) d = std::abs(d - center);
  const double sd_diff = 1.4826 * median_of(diffs);
  const double total = sd_diff * sd_diff / 2;
  return {std::max(0.0, total - typical_own_variance), total};
}

// Optimal partitioning (the exact dynamic programme that PELT prunes; histories here are at most a few hundred
// runs): the segment starts minimizing total cost + penalty per change, each segment at least min_segment long.
std::vector<std::size_t> optimal_partition(const segment_costs& costs, std::size_t n, double penalty,
                                           std::size_t min_segment) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, inf);
  std::vector<std::size_t> start(n + 1, 0);
  best[0] = -penalty;
  for (std::size_t t = min_segment; t <= n; ++t) {
    for (std::size_t s = 0; s + min_segment <= t; ++s) {
      if (best[s] == inf) continue;
      const double total = best[s] + costs.cost(s, t) + penalty;
      if (total < best[t]) {
        best[t] = total;
        start[t] = s;
      }
    }
  }
  std::vector<std::size_t> cuts;
  for (std::size_t t = n; start[t] > 0; t = start[t]) cuts.push_back(start[t]);
  std::reverse(cuts.begin(), cuts.end());
  return cuts;
}

// log of N(d; 0, v + prior) / N(d; 0, v): the Bayes factor of a step of log size d measured with variance v,
// against none, under a N(0, prior) step size.
double log_step_bayes_factor(double d, double v, double prior) {
  return 0.5 * std::log(v / (v + prior)) + 0.5 * d * d * prior / (v * (v + prior));
}

// The step at `cut` between the neighbouring cuts a and b: its size from the two segments' weighted means, and the
// posterior probability of one step somewhere in [a, b) (uniform over its admissible places) against none.
change_point judge_cut(const segment_costs& costs, std::size_t a, std::size_t cut, std::size_t b,
                       const change_options& opt) {
  change_point c;
  c.index = cut;
  c.n_before = cut - a;
  c.n_after = b - cut;
  const double d = costs.mean(cut, b) - costs.mean(a, cut);
  const double se = std::sqrt(1 / costs.weight(a, cut) + 1 / costs.weight(cut, b));
  c.ratio = std::exp(d);
  c.ci_lo = std::exp(d - 1.959964 * se);
  c.ci_hi = std::exp(d + 1.959964 * se);

  const double prior = opt.step_prior_sd * opt.step_prior_sd;
  double max_log = -std::numeric_limits<double>::infinity();
  std::vector<double> logs;
  for (std::size_t t = a + opt.min_segment; t + opt.min_segment <= b; ++t) {
    const double dt = costs.mean(t, b) - costs.mean(a, t);
    const double vt = 1 / costs.weight(a, t) + 1 / costs.weight(t, b);
    logs.push_back(log_step_bayes_factor(dt, vt, prior));
    max_log = std::max(max_log, logs.back());
  }
  double sum = 0;
  for (double l : logs) sum += std::exp(l - max_log);
  const double log_mean_factor = max_log + std::log(sum / static_cast<double>(logs.size()));
  const double p_step = 1 - std::pow(1 - opt.hazard, static_cast<double>(b - a - 1));
  const double log_odds = log_mean_factor + std::log(p_step / (1 - p_step));
  c.probability = log_odds > 0 ? 1 / (1 + std::exp(-log_odds)) : std::exp(log_odds) / (1 + std::exp(log_odds));
  return c;
}

// The min_segment runs on each side of the cut each lie nearer their own side's level than the other's: one
// far-off run beside a normal one averages to a step, but it is an outlier, not a new level.
bool supported(const std::vector<double>& y, const segment_costs& costs, std::size_t a, std::size_t cut, std::size_t b,
               std::size_t min_segment) {
  const double before = costs.mean(a, cut);
  const double after = costs.mean(cut, b);
  for (std::size_t i = cut; i < cut + min_segment; ++i) {
    if (std::abs(y[i] - after) > std::abs(y[i] - before)) return false;
  }
  for (std::size_t i = cut - min_segment; i < cut; ++i) {
    if (std::abs(y[i] - before) > std::abs(y[i] - after)) return false;
  }
  return true;
}

bool reportable(const change_point& c, const change_options& opt) {
  return c.probability >= opt.probability && std::abs(c.ratio - 1) >= opt.min_effect;
}

// Judges every cut between its neighbours; while some fail, drops the weakest and judges the rest again (their
// neighbourhoods grow), so each reported step is judged against the steps that are reported beside it.
std::vector<change_point> confirm_cuts(const std::vector<double>& y, const segment_costs& costs,
                                       std::vector<std::size_t> cuts, const change_options& opt) {
  const std::size_t n = y.size();
  while (!cuts.empty()) {
    std::vector<change_point> judged;
    std::vector<bool> ok;
    for (std::size_t i = 0; i < cuts.size(); ++i) {
      const std::size_t a = i == 0 ? 0 : cuts[i - 1];
      const std::size_t b = i + 1 == cuts.size() ? n : cuts[i + 1];
      judged.push_back(judge_cut(costs, a, cuts[i], b, opt));
      ok.push_back(reportable(judged.back(), opt) && supported(y, costs, a, cuts[i], b, opt.min_segment));
    }
    std::size_t weakest = judged.size();
    for (std::size_t i = 0; i < judged.size(); ++i) {
      if (ok[i]) continue;
      if (weakest == judged.size() || judged[i].probability < judged[weakest].probability) weakest = i;
    }
    if (weakest == judged.size()) return judged;
    cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(weakest));
  }
  return {};
}

}  // namespace

std::optional<run_point> summarize_run(const sample_view& run) {
  const auto stat = observed_statistic(run, statistic::median);
  if (!stat || !(*stat > 0) || !std::isfinite(*stat)) return std::nullopt;
  run_point out{std::log(*stat), 0.0};
  const auto total = std::accumulate(run.groups.begin(), run.groups.end(), std::int64_t{0});
  if (run.groups.size() >= 2 && total == static_cast<std::int64_t>(run.samples.size())) {
    std::vector<double> logs;
    std::size_t at = 0;
    for (const auto g : run.groups) {
      const auto begin = run.samples.begin() + static_cast<std::ptrdiff_t>(at);
      const double m = median(std::vector<double>(begin, begin + static_cast<std::ptrdiff_t>(g)));
      if (m > 0) logs.push_back(std::log(m));
      at += static_cast<std::size_t>(g);
    }
    if (logs.size() >= 2) {
      const double mean = std::accumulate(logs.begin(), logs.end(), 0.0) / static_cast<double>(logs.size());
      double ss = 0;
      for (double l : logs) ss += (l - mean) * (l - mean);
      out.log_se = std::sqrt(ss / static_cast<double>(logs.size() - 1) / static_cast<double>(logs.size()));
    }
    return out;
  }
  const auto ci = median_with_interval(std::vector<double>(run.samples.begin(), run.samples.end()));
  if (ci.lo > 0 && ci.hi > ci.lo) out.log_se = (std::log(ci.hi) - std::log(ci.lo)) / 4;
  return out;
}

std::optional<run_point> point_from_interval(double median_ms, std::optional<double> lo_ms,
                                             std::optional<double> hi_ms) {
  if (!(median_ms > 0) || !std::isfinite(median_ms)) return std::nullopt;
  run_point out{std::log(median_ms), 0.0};
  if (lo_ms && hi_ms && *lo_ms > 0 && *hi_ms > *lo_ms) out.log_se = (std::log(*hi_ms) - std::log(*lo_ms)) / 4;
  return out;
}

change_scan find_change_points(std::span<const run_point> history, const change_options& opt) {
  change_scan out;
  const std::size_t n = history.size();
  if (n < std::max<std::size_t>(opt.min_history, 2 * opt.min_segment) || opt.min_segment == 0) return out;
  std::vector<double> y(n), own(n);
  std::vector<double> known;
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(history[i].log_stat)) return out;
    y[i] = history[i].log_stat;
    own[i] = history[i].log_se * history[i].log_se;
    if (own[i] > 0 && std::isfinite(own[i])) known.push_back(own[i]);
  }
  // A run never counts for more than a typical one: a spread measured over three or four processes is often far
  // too small by luck, and such a run would decide a step alone. Less precise runs (and none without its own
  // uncertainty) count for less.
  const double typical = known.empty() ? 0.0 : median_of(known);
  for (auto& v : own) {
    if (!(v > typical) || !std::isfinite(v)) v = typical;
  }
  const auto [extra, total] = between_run_variance(y, typical);
  out.noise = std::sqrt(total);
  // The noise of a short history is itself uncertain (a median absolute deviation of a few differences): it is
  // widened by a factor that fades as the history grows, so the first runs of a history do not raise false steps.
  const double widen = 1 + opt.short_history_widening / static_cast<double>(n - 1);
  std::vector<double> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = 1 / std::max((own[i] + extra) * widen, min_variance);
  const segment_costs costs(y, w);
  out.changes = confirm_cuts(y, costs, optimal_partition(costs, n, opt.penalty, opt.min_segment), opt);
  return out;
}

std::vector<change_point> unknown_changes(const std::vector<change_point>& found, std::span<const known_change> known,
                                          std::size_t tolerance) {
  std::vector<change_point> out;
  for (const auto& c : found) {
    const bool seen = std::any_of(known.begin(), known.end(), [&](const known_change& k) {
      const std::size_t gap = c.index > k.index ? c.index - k.index : k.index - c.index;
      return gap <= tolerance && k.slower == c.slower();
    });
    if (!seen) out.push_back(c);
  }
  return out;
}

}  // namespace rnx::stats
