// Robust summaries of timing samples (median, spread, confidence) and the instability tests over processes.
#pragma once

#include "rnx/stats/summary.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rnx::runner {

// The one median of the project (NaN when empty).
using stats::median;

// Relative half-width of a distribution-free 95% confidence interval of the median (order statistics);
// +inf when there are too few samples to bound it.
double median_ci_relative_halfwidth(std::vector<double> values);

// Median absolute deviation scaled to a normal sigma, divided by the median (a robust relative spread).
double relative_mad(const std::vector<double>& values);

// Why a configuration's samples cannot be judged: process medians that disagree far beyond each process's own
// spread, or a multi-modal pool of samples. nullopt = stable. `groups` splits `samples` per process. `paired`: the
// side of a paired run, whose verdict is over block ratios already, so the advice is not to measure paired.
std::optional<std::string> instability(const std::vector<double>& samples, const std::vector<std::int64_t>& groups,
                                       bool paired = false);

}  // namespace rnx::runner
