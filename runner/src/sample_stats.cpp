// Sample summaries and the `unstable` rules: process-median disagreement and multi-modality.
#include "rnx/runner/sample_stats.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace rnx::runner {

double median_ci_relative_halfwidth(std::vector<double> values) {
  if (values.size() < 6) return std::numeric_limits<double>::infinity();
  const stats::median_interval ci = stats::median_with_interval(std::move(values));
  if (!(ci.median > 0)) return std::numeric_limits<double>::infinity();
  return (ci.hi - ci.lo) / (2 * ci.median);
}

double relative_mad(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double m = median(values);
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double v : values) dev.push_back(std::fabs(v - m));
  return m > 0 ? stats::mad_to_sd * median(dev) / m : 0;
}

namespace {

std::string fmt(double v, int precision = 3) {
  std::ostringstream os;
  os.precision(precision);
  os << v;
  return os.str();
}

// The multi-modality rule of instability() on one set of samples.
std::optional<std::string> bimodality(std::vector<double> sorted) {
  std::sort(sorted.begin(), sorted.end());
  const std::size_t n = sorted.size();
  if (n < 10) return std::nullopt;
  const std::size_t least = (n * 35 + 99) / 100;
  for (std::size_t i = std::max<std::size_t>(2, least); i + least <= n && i < n; ++i) {
    double below = sorted[i - 1];
    double above = sorted[i];
    if (!(below > 0)) continue;
    double gap = above / below - 1;
    if (gap <= 0.3) continue;
    std::vector<double> low(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(i));
    std::vector<double> high(sorted.begin() + static_cast<std::ptrdiff_t>(i), sorted.end());
    double spread = std::max(relative_mad(low), relative_mad(high));
    if (gap > 3 * spread) {
      return "samples are bimodal: " + fmt(100.0 * static_cast<double>(i) / static_cast<double>(n), 3) + "% near " +
             fmt(median(low), 4) + " ms and " + fmt(100.0 * static_cast<double>(n - i) / static_cast<double>(n), 3) +
             "% near " + fmt(median(high), 4) + " ms; something else shares the machine or the kernel has two paths";
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> instability(const std::vector<double>& samples, const std::vector<std::int64_t>& groups,
                                       bool paired) {
  // One part per worker process; the whole pool when the samples carry no process groups.
  std::vector<std::vector<double>> parts;
  if (groups.size() >= 2) {
    std::size_t at = 0;
    for (auto g : groups) {
      const auto count = static_cast<std::size_t>(g);
      parts.emplace_back(samples.begin() + static_cast<std::ptrdiff_t>(at),
                         samples.begin() + static_cast<std::ptrdiff_t>(at + count));
      at += count;
    }
  } else {
    parts.push_back(samples);
  }
  // Process medians: flagged when they differ by more than 3x AND by more than eight times the typical
  // within-process spread. Both are needed: the processes of one run on a quiet two-core CI machine were
  // seen up to 2x apart (its L3 is shared with other tenants), which the two-level posterior absorbs (it
  // widens, and the verdict abstains when it must), while the failure this guards against is several-fold:
  // one process throttled or starved.
  if (parts.size() >= 2) {
    std::vector<double> medians;
    std::vector<double> spreads;
    for (const auto& part : parts) {
      medians.push_back(median(part));
      spreads.push_back(relative_mad(part));
    }
    auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
    double disagreement = *lo > 0 ? *hi / *lo - 1 : 0;
    double within = std::max(median(spreads), 0.005);
    if (disagreement > 2.0 && disagreement > 8 * within) {
      std::string list;
      for (double m : medians) list += (list.empty() ? "" : ", ") + fmt(m, 4);
      return "process medians disagree: " + list + " ms (max/min " + fmt(1 + disagreement) +
             "x) while each process varies only ~" + fmt(100 * within, 2) +
             (paired ? "%; rerun on a quieter machine (in-process pairs' block ratios cancel what both sides "
                       "share in a process)"
                     : "%; rerun on a quieter machine, or measure paired (rnx bench --pair BASE, rnx gate --mode "
                       "paired), whose block ratios cancel what both sides share");
    }
  }
  // Multi-modality inside one process: a split of its sorted samples, with at least 35% on each side, where the
  // jump between neighbours exceeds 30% of the value and three times the spread of either side. A smaller
  // minority mode (a few preempted or interrupted samples) cannot move the median, so it is not a reason to
  // abstain. Processes are looked at one by one: two clusters of whole processes are drift between processes,
  // which the rule above and the two-level posterior deal with.
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (auto why = bimodality(std::move(parts[i]))) {
      return parts.size() > 1 ? "process " + std::to_string(i + 1) + ": " + *why : *why;
    }
  }
  return std::nullopt;
}

}  // namespace rnx::runner
