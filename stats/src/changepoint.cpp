// Change points over a history of run statistics (see changepoint.hpp; the method is in docs/statistics.md).
#include "rnx/stats/changepoint.hpp"

#include "rnx/stats/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <numeric>

namespace rnx::stats {

namespace {

// Below this the standard deviation of a log statistic (0.01%) is treated as this: identical values still have
// a finite weight.
constexpr double min_variance = 1e-8;

// A run this many of its standard deviations off the level of the runs around it disagrees with them: for normal
// noise that happens about once in 16000 runs.
constexpr double outlier_z = 4.0;

// A run's own variance counts as its own only above this multiple of the history's typical one (own_variances).
constexpr double stands_out = 4.0;

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

// E[Z^2 | |Z| among the smallest fraction q] for a standard normal Z: a trimmed mean of squares divided by it is
// a variance again.
double trimmed_normal_second_moment(double q) {
  double lo = 0, hi = 10;  // c with P(|Z| < c) = q, by bisection
  for (int i = 0; i < 60; ++i) {
    const double c = (lo + hi) / 2;
    (std::erf(c / std::numbers::sqrt2) < q ? lo : hi) = c;
  }
  const double c = (lo + hi) / 2;
  const double density = std::exp(-c * c / 2) / std::sqrt(2 * std::numbers::pi);
  return 1 - 2 * c * density / q;
}

// Deviations of the log statistics whose scatter measures the noise: each deviation's variance is
// base + multiple * between under between-run variance `between`. The largest ones are left out (a step, a wild run)
// and the rest calibrated against what that trimming leaves of a standard normal's mean square.
struct deviations {
  std::vector<double> dev;
  std::vector<double> base;      // the deviation's variance from the runs' own variances
  std::vector<double> multiple;  // and its multiple of the between-run variance
  std::size_t kept = 0;          // how many of the smallest are kept
  double moment = 1;             // what that trimming leaves of a standard normal's mean square
  double degrees = 0;            // what the noise estimate rests on: deviations less the levels fitted to them
};

void trim(deviations& d, std::size_t kept) {
  const auto m = static_cast<double>(d.dev.size());
  d.kept = std::max<std::size_t>(1, std::min(kept, d.dev.size()));
  // The kept fraction taken as (kept + 1/2) / all leaves the estimate unbiased for normal noise from 7 on.
  d.moment = trimmed_normal_second_moment(std::min(0.999, (static_cast<double>(d.kept) + 0.5) / m));
}

// Successive differences, as their distances from the median difference (a ramp shifts them all alike), without
// their largest quarter (the one difference a step moves, the two a wild run moves). Needs no segmentation: the
// first estimate.
deviations successive_differences(const std::vector<double>& y, const std::vector<double>& own) {
  deviations out;
  for (std::size_t i = 1; i < y.size(); ++i) {
    out.dev.push_back(y[i] - y[i - 1]);
    out.base.push_back(own[i] + own[i - 1]);
    out.multiple.push_back(2);
  }
  const double center = median_of(out.dev);
  for (auto& d : out.dev) d -= center;
  trim(out, out.dev.size() * 3 / 4);
  out.degrees = static_cast<double>(out.dev.size());
  return out;
}

// Each run's distance from its segment's mean (segments between `cuts`), for the runs before `upto`, without the
// largest tenth (a wild run, a step the first pass missed). Every run's error counts once instead of twice, as in
// a difference: about twice the information of successive_differences, so a history's noise is known with about
// half the variance. A segment of one run says nothing of the noise and is left out.
deviations segment_residuals(const std::vector<double>& y, const std::vector<double>& own,
                             const std::vector<std::size_t>& cuts, std::size_t upto) {
  deviations out;
  std::size_t s = 0;
  for (std::size_t c = 0; c <= cuts.size() && s < upto; ++c) {
    const std::size_t t = std::min(c < cuts.size() ? cuts[c] : upto, upto);
    if (t >= s + 2) {
      const auto first = y.begin() + static_cast<std::ptrdiff_t>(s);
      const double mean =
          std::accumulate(first, first + static_cast<std::ptrdiff_t>(t - s), 0.0) / static_cast<double>(t - s);
      // The segment mean takes a run's share of its own error: its residual keeps (1 - 1/length) of its variance.
      const double kept = 1 - 1 / static_cast<double>(t - s);
      for (std::size_t i = s; i < t; ++i) {
        out.dev.push_back(y[i] - mean);
        out.base.push_back(own[i] * kept);
        out.multiple.push_back(kept);
      }
      out.degrees += static_cast<double>(t - s - 1);
    }
    s = t;
  }
  trim(out, out.dev.size() - out.dev.size() / 10);
  return out;
}

// The trimmed mean square of the deviations each divided by its standard deviation under between-run variance
// `between`, over the standard normal's: 1 when `between` explains them.
double trimmed_scaled_square(const deviations& d, double between) {
  std::vector<double> scaled(d.dev.size());
  for (std::size_t i = 0; i < scaled.size(); ++i) {
    scaled[i] = d.dev[i] * d.dev[i] / std::max(d.base[i] + d.multiple[i] * between, min_variance);
  }
  std::nth_element(scaled.begin(), scaled.begin() + static_cast<std::ptrdiff_t>(d.kept - 1), scaled.end());
  const double sum = std::accumulate(scaled.begin(), scaled.begin() + static_cast<std::ptrdiff_t>(d.kept), 0.0);
  return sum / static_cast<double>(d.kept) / d.moment;
}

// The between-run variance: the part of the deviations' scatter that the runs' own variances do not explain,
// chosen so that the deviations over their standard deviations have unit trimmed mean square. The weights are
// then calibrated against the history itself, whether the runs' own uncertainties say much about their errors or
// little (then this part covers it). Found by bisection: the scaled square falls as `between` grows, and at
// max(dev^2 / multiple) / moment it is at most 1.
double between_run_variance(const deviations& d) {
  if (trimmed_scaled_square(d, 0.0) <= 1) return 0.0;
  double lo = 0, hi = 0;
  for (std::size_t i = 0; i < d.dev.size(); ++i) hi = std::max(hi, d.dev[i] * d.dev[i] / (d.multiple[i] * d.moment));
  for (int i = 0; i < 50; ++i) {
    const double mid = (lo + hi) / 2;
    (trimmed_scaled_square(d, mid) > 1 ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// Each run's own variance (its log_se squared), where it stands out. The spread of three or four processes varies
// by chance, rarely beyond four times its typical (median) value (6% of runs of 3 processes, 2% of 4: chi-square
// with 2 and 3 degrees of freedom). Below that a run's own variance is taken as the typical one: a run whose
// processes agreed by luck does not decide a step alone, one whose processes disagreed by luck still counts. Above
// it, its own: a run whose processes swung counts less. A run without its own uncertainty gets the typical one.
std::vector<double> own_variances(std::span<const run_point> history) {
  std::vector<double> own, known;
  for (const auto& p : history) {
    own.push_back(p.log_se * p.log_se);
    if (own.back() > 0 && std::isfinite(own.back())) known.push_back(own.back());
  }
  const double typical = known.empty() ? 0.0 : median_of(known);
  for (auto& v : own) {
    if (!(v > stands_out * typical) || !std::isfinite(v)) v = typical;
  }
  return own;
}

// Every run's variance about its level, its own plus the between-run part. The noise of a short history is itself
// uncertain: all are widened by a factor that fades as the history grows, so the first runs of a history do not
// raise false steps. Returns them and the typical (median) variance of one run before the widening.
std::pair<std::vector<double>, double> run_variances(std::vector<double> own, const deviations& d, double widening) {
  const double between = between_run_variance(d);
  const double widen = 1 + widening / std::max(d.degrees, 1.0);
  for (auto& v : own) v += between;
  const double typical = median_of(own);
  for (auto& v : own) v *= widen;
  return {std::move(own), typical};
}

// The mean of runs [s, t) weighted by w, and the variance of that mean.
std::pair<double, double> weighted_level(const std::vector<double>& y, const std::vector<double>& w, std::size_t s,
                                         std::size_t t) {
  double sw = 0, swy = 0;
  for (std::size_t i = s; i < t; ++i) {
    sw += w[i];
    swy += w[i] * y[i];
  }
  return {swy / sw, 1 / sw};
}

// A run more than outlier_z standard deviations off both the level of the min_segment runs before it and that of
// the min_segment runs after it is one wild run, not a new level (a step's first run agrees with the runs after
// it): its variance gains its squared distance from the nearer level, so it barely counts in the segmentation and
// the confirmation. The newest runs, without min_segment runs after them, are left to settled().
void discount_outliers(const std::vector<double>& y, std::size_t min_segment, std::vector<double>& v) {
  std::vector<double> w(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) w[i] = 1 / std::max(v[i], min_variance);
  std::vector<double> gained(v.size(), 0.0);
  for (std::size_t i = min_segment; i + min_segment < y.size(); ++i) {
    const auto [before, before_var] = weighted_level(y, w, i - min_segment, i);
    const auto [after, after_var] = weighted_level(y, w, i + 1, i + 1 + min_segment);
    const double off_before = std::abs(y[i] - before), off_after = std::abs(y[i] - after);
    if (off_before > outlier_z * std::sqrt(v[i] + before_var) && off_after > outlier_z * std::sqrt(v[i] + after_var)) {
      gained[i] = std::min(off_before, off_after) * std::min(off_before, off_after);
    }
  }
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += gained[i];
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

// The min_segment runs on each side of the cut each agree with their own side's level: none lies more than
// outlier_z standard deviations of its residual away from it. A step's first runs agree with the runs after it;
// one wild run beside a normal one averages to a step but agrees with neither (the newest runs, which
// discount_outliers cannot judge yet, are caught here).
bool settled(const std::vector<double>& y, const std::vector<double>& w, const segment_costs& costs, std::size_t a,
             std::size_t cut, std::size_t b, std::size_t min_segment) {
  const auto agrees = [&](std::size_t i, std::size_t s, std::size_t t) {
    const double residual_variance = std::max(1 / w[i] - 1 / costs.weight(s, t), min_variance);
    return std::abs(y[i] - costs.mean(s, t)) <= outlier_z * std::sqrt(residual_variance);
  };
  for (std::size_t i = cut; i < cut + min_segment; ++i) {
    if (!agrees(i, cut, b)) return false;
  }
  for (std::size_t i = cut - min_segment; i < cut; ++i) {
    if (!agrees(i, a, cut)) return false;
  }
  return true;
}

bool reportable(const change_point& c, const change_options& opt) {
  return c.probability >= opt.probability && std::abs(c.ratio - 1) >= opt.min_effect;
}

// Judges every cut between its neighbours; while some fail, drops the weakest and judges the rest again (their
// neighbourhoods grow), so each reported step is judged against the steps that are reported beside it.
std::vector<change_point> confirm_cuts(const std::vector<double>& y, const std::vector<double>& w,
                                       const segment_costs& costs, std::vector<std::size_t> cuts,
                                       const change_options& opt) {
  const std::size_t n = y.size();
  while (!cuts.empty()) {
    std::vector<change_point> judged;
    std::vector<bool> ok;
    for (std::size_t i = 0; i < cuts.size(); ++i) {
      const std::size_t a = i == 0 ? 0 : cuts[i - 1];
      const std::size_t b = i + 1 == cuts.size() ? n : cuts[i + 1];
      judged.push_back(judge_cut(costs, a, cuts[i], b, opt));
      ok.push_back(reportable(judged.back(), opt) && settled(y, w, costs, a, cuts[i], b, opt.min_segment));
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

namespace {

// One segmentation of the history with the noise that the deviations `d` measure: the run variances (widened, wild
// runs discounted) and the change points that pass the confirmation.
change_scan segment_history(const std::vector<double>& y, const std::vector<double>& own, const deviations& d,
                            double widening, const change_options& opt) {
  change_scan out;
  auto [v, typical] = run_variances(own, d, widening);
  out.noise = std::sqrt(typical);
  discount_outliers(y, opt.min_segment, v);
  std::vector<double> w(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) w[i] = 1 / std::max(v[i], min_variance);
  const segment_costs costs(y, w);
  out.changes = confirm_cuts(y, w, costs, optimal_partition(costs, y.size(), opt.penalty, opt.min_segment), opt);
  return out;
}

}  // namespace

change_scan find_change_points(std::span<const run_point> history, const change_options& opt) {
  const std::size_t n = history.size();
  if (n < std::max<std::size_t>(opt.min_history, 2 * opt.min_segment) || opt.min_segment == 0) return {};
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(history[i].log_stat)) return {};
    y[i] = history[i].log_stat;
  }
  const auto own = own_variances(history);
  // First the noise from successive differences, which needs no segmentation; then, from the steps that finds, the
  // noise from each run's distance to its own level, which rests on about twice the information.
  const auto first = segment_history(y, own, successive_differences(y, own), opt.short_history_widening, opt);
  std::vector<std::size_t> cuts;
  for (const auto& c : first.changes) cuts.push_back(c.index);
  // The newest runs are on trial: a step they begin would inflate the noise they are judged against, so they do
  // not measure it.
  const std::size_t on_trial = opt.min_segment + 1;
  if (!opt.second_pass || n < on_trial + opt.min_history) return first;
  const auto residuals = segment_residuals(y, own, cuts, n - on_trial);
  if (residuals.dev.empty()) return first;  // segments of one run only: nothing to measure the noise again from
  return segment_history(y, own, residuals, opt.residual_widening, opt);
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
