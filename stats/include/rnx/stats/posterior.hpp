// Bayesian speed comparison of two sample sets: posterior of the head/base ratio and its ROPE decision.
//
//   rnx::stats::comparison_options opt;              // rope 2%, probability 0.95, 8 samples, 2000 draws
//   std::vector<double> base = {...}, head = {...};  // per-call times, any unit
//   auto c = rnx::stats::compare_samples({base}, {head}, opt);
//   if (c.result == rnx::decision::slower) std::cout << "slower by " << c.ratio.value() << "x\n";
//
// Samples with process groups ({samples, groups}) get the two-level posterior: a Bayesian bootstrap
// inside each process, and a Student-t posterior over the process statistics (docs/statistics.md says
// why a Dirichlet over 3-5 processes is not enough). Nothing here throws on data.
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rnx::stats {

struct sample_view {
  std::span<const double> samples;
  std::span<const std::int64_t> groups = {};  // consecutive samples per process; empty = one process
  bool unstable = false;
  std::string unstable_reason = {};
  // Per group, the arm of a two-arm design its process belonged to (0 or 1; an in-process pair's side loaded
  // first). Where both arms hold at least two processes, the level over processes weighs the two arms alike and
  // takes its spread within each arm (docs/statistics.md); otherwise, or empty, the processes are one arm.
  std::span<const int> arms = {};
};

struct comparison_options {
  double rope = gate_policy{}.rope;  // the defaults are [gate]'s: one place
  double probability = gate_policy{}.probability;
  int min_samples = gate_policy{}.min_samples;
  int resamples = gate_policy{}.resamples;
  statistic stat = gate_policy{}.stat;
  // Looks of a sequential schedule that may stop at any of them, and which of them this is (1-based; 0: the last).
  // Each look needs the threshold of an alpha-spending schedule (look_schedule.hpp): early looks nearly certainty,
  // the last close to `probability`, so stopping early keeps the error rate of one look at `probability`.
  int looks = 1;
  int look = 0;
  // Who measured both sides, which decides what an abstain advises: rnx bench (unset) can measure the two revisions
  // paired; a harness whose results were imported (rnx import: runtime gbench, pytest-benchmark or nvbench) cannot,
  // and is told how to give its harness more to go on instead.
  std::optional<runtime_kind> harness;
  // The two sides are one paired run measured by process (not in-process): an abstain is not told to measure paired.
  bool paired_by_process = false;
};

// The probability a decision needs under `opt`: look `opt.look` of the schedule (probability itself for one look).
double decision_threshold(const comparison_options& opt);

// Base and head of one in-process paired configuration: the same processes, blocks of `block` samples a side
// (sample i of each side in the same block), `groups` samples a side per process.
struct paired_view {
  std::span<const double> base;
  std::span<const double> head;
  std::span<const std::int64_t> groups = {};
  std::int64_t block = 4;
  std::span<const int> arms = {};  // per group: 1 where the head was loaded first in its process, else 0
};

// How a paired configuration's per-process ratios scatter: between processes, and within one (docs/statistics.md).
struct process_spread {
  int processes = 1;
  double between = 0;  // sd of the processes' median log ratios (over the two load orders where they are arms)
  double within = 0;   // typical standard error of one process's median log ratio (robust, from its MAD)
};

// Whether a longer process would tell more than another process would: false where the processes differ by more
// than twice what each one's own noise explains, so only more processes narrow the interval. One rule for the
// runner's later looks (docs/runner.md) and an abstain's advice.
bool longer_processes_help(const process_spread& spread);

struct comparison {
  decision result = decision::abstain;
  std::optional<double> ratio;  // head statistic / base statistic, on the observed data
  std::optional<double> ci_lo;  // 95% credible interval of the ratio
  std::optional<double> ci_hi;
  std::optional<double> p_faster;
  std::optional<double> p_slower;
  std::optional<double> p_equivalent;
  std::optional<double> base_stat;
  std::optional<double> head_stat;
  std::int64_t n_base = 0;
  std::int64_t n_head = 0;
  std::optional<double> mde;  // smallest slowdown (fraction) this posterior could have called slower
  double threshold = 0.95;    // the probability a decision needed (decision_threshold)
  std::string reason;         // set for anything that is not a plain comparison; an abstain says what would decide it
  // Paired comparisons whose processes disagree far beyond their own noise: why (also at the end of `reason`).
  std::string process_note;
  std::optional<process_spread> spread;  // paired in-process comparisons: how their processes' ratios scatter
};

// Posterior draws of the natural log of one side's statistic (exposed for tests and the flat contrast).
// `flat` ignores groups (a single-level Bayesian bootstrap over all samples).
std::vector<double> posterior_draws(const sample_view& side, const comparison_options& opt, std::uint64_t seed,
                                    bool flat = false);

// The decision rule of docs/statistics.md; `flat` as above. An `unstable` side does not veto a decision when the
// change is larger than the instability (the head's 5-95% range lies beyond the base's, by more than the rope).
comparison compare_samples(const sample_view& base, const sample_view& head, const comparison_options& opt,
                           bool flat = false);

// The same rule over paired ratios: per block, head time / base time; a Bayesian bootstrap of their statistic
// inside each process and the Student-t level over processes. Drift of the machine that both sides share
// cancels in each ratio, so `unstable` sides are no reason to abstain here.
comparison compare_paired(const paired_view& pair, const comparison_options& opt);

// The central interval [q, 1 - q] of values (q <= 0.5), each end linear-interpolated between neighbouring order
// statistics like numpy's default quantile; values is reordered. NaNs for no values. (Exposed for tests.)
std::pair<double, double> central_interval(std::vector<double>& values, double q);

// An unstable result's reason on one line: without the runner's leading "unstable: " and without the list of what
// each process went through (" [process 1: ...]"), which the run document keeps and the pages fold away.
std::string unstable_line(std::string_view reason);

// The observed statistic (median or mean; for grouped samples the geometric mean of process statistics, or of the
// two arms' geometric means where the groups form two arms).
std::optional<double> observed_statistic(const sample_view& side, statistic stat);

}  // namespace rnx::stats
