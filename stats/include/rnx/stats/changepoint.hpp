// Change points in one configuration's history: steps in the per-run statistic of a branch, same environment.
//
//   std::vector<rnx::stats::run_point> history;              // oldest first, one point per stored run
//   for (const auto& r : runs) history.push_back(rnx::stats::summarize_run({r.samples_ms, r.groups}));
//   auto scan = rnx::stats::find_change_points(history);
//   for (const auto& c : scan.changes)                       // c.index: the first run after the step
//     std::cout << "x" << c.ratio << " [" << c.ci_lo << ", " << c.ci_hi << "] P=" << c.probability << "\n";
//
// The method (docs/statistics.md, "Change points"): penalized optimal partitioning of the log statistics with a
// Gaussian cost weighted by each run's variance (the between-run noise plus the run's own uncertainty where it
// stands out; one wild run between normal ones barely counts). The noise is estimated twice: robustly from the
// history's successive differences, which need no segmentation, then from each run's distance to its level in the
// steps that first pass found, which rests on about twice the information; the newest runs, on trial, do not
// measure it. Each proposed step is then kept only when a Bayesian single-change model over its neighbourhood
// gives it the required probability, it is at least `min_effect` large, and the runs beside it agree with their
// own side's level. Nothing here throws on data: too short a history
// or degenerate values give no change points.
#pragma once

#include "rnx/stats/posterior.hpp"

#include <cstddef>
#include <optional>
#include <span>
#include <vector>

namespace rnx::stats {

// One run's statistic as a change-point input: the natural log of the run statistic and its standard error.
struct run_point {
  double log_stat = 0;
  double log_se = 0;  // 0 = unknown: the between-run noise estimated from the history stands for it
};

// The run statistic verdicts compare (observed_statistic: per-process median, geometric mean over processes) and
// its uncertainty: over processes, the standard error of the mean of their log medians; for one process, a
// quarter of the log width of the median's distribution-free 95% interval (about one standard error).
// nullopt when the run has no positive statistic.
std::optional<run_point> summarize_run(const sample_view& run);

// The same from what the store keeps of an older run (its median and order-statistic interval); a missing or
// degenerate interval gives log_se 0.
std::optional<run_point> point_from_interval(double median_ms, std::optional<double> lo_ms,
                                             std::optional<double> hi_ms);

struct change_options {
  double penalty = 16.0;  // cost of one more change point, in squared standard deviations (calibrated: docs/drift.md)
  std::size_t min_segment = 2;  // runs on each side of a step; the newest run alone never makes a change point
  std::size_t min_history = 8;  // shorter histories are not scanned
  double probability = 0.95;    // a change point's probability must reach this
  double min_effect = 0.005;    // and its size (ratio - 1, either way) this fraction
  double hazard = 0.02;         // prior chance of a step between two consecutive runs (chosen: docs/drift.md)
  double step_prior_sd = 0.02;  // prior spread of a step's log size (chosen: docs/drift.md)
  // The noise of a short history is itself uncertain: run variances are widened by 1 + this / the deviations the
  // noise estimate rests on, in the first pass (successive differences) and the second (residuals about the first
  // pass's levels; chosen: docs/drift.md).
  double short_history_widening = 13.0;
  double residual_widening = 6.0;
  // Measure the noise again from the first pass's segments and report the second pass (docs/statistics.md); false:
  // the first pass alone, the detector as it was before the second estimate (kept for comparisons).
  bool second_pass = true;
};

struct change_point {
  std::size_t index = 0;  // the first run after the step (0-based into the history)
  double ratio = 1;       // statistic after / before (segment means, weighted)
  double ci_lo = 1;       // 95% interval of the ratio
  double ci_hi = 1;
  double probability = 0;    // posterior probability of a step in its neighbourhood (location marginalized)
  std::size_t n_before = 0;  // runs in the segment before and after it
  std::size_t n_after = 0;
  bool slower() const { return ratio > 1; }
};

struct change_scan {
  std::vector<change_point> changes;  // oldest first
  double noise = 0;  // the between-run standard deviation of the log statistic estimated from the history
};

change_scan find_change_points(std::span<const run_point> history, const change_options& opt = {});

// A change point already stored (and announced): its index in the same history and its direction.
struct known_change {
  std::size_t index = 0;
  bool slower = false;
};

// The changes of `found` that are not one of `known`: a scan of a longer history can move a step by a run or two,
// so a found change within `tolerance` runs of a known one in the same direction is that one.
std::vector<change_point> unknown_changes(const std::vector<change_point>& found, std::span<const known_change> known,
                                          std::size_t tolerance = 2);

}  // namespace rnx::stats
