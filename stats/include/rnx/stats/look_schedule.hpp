// The probability each look of a sequential schedule needs: an O'Brien-Fleming-type alpha-spending schedule.
//
//   auto t = rnx::stats::look_thresholds(0.95, 4);  // {0.99992, 0.99455, 0.9778, 0.9573}
//   bool decided = p_slower >= t[look - 1];
//
// The error rate 1 - probability is spent over the looks by the Lan-DeMets spending function
// alpha(t) = 2 - 2 Phi(z_{1 - alpha/2} / sqrt(t)) at the information fractions t = k / looks: early looks get almost
// none of it, the last look nearly all. Each look's boundary is computed exactly (numerical integration over the
// joint law of a cumulative statistic at the looks), so the chance of a false decision over the whole schedule is
// 1 - probability, not less as with a split of the probability over the looks (Bonferroni), and the last look
// needs close to the plain probability (docs/statistics.md, sequential sampling). Looks that are skipped (an
// in-process pair looks only after an even number of processes) spend nothing, which keeps the promise.
#pragma once

#include <vector>

namespace rnx::stats {

// The thresholds of looks 1..looks under `probability` (0 < probability <= 1); one look: {probability}.
// Computed once per (probability, looks) and kept; safe to call from several threads.
std::vector<double> look_thresholds(double probability, int looks);

// Look `look` (1-based; 0 or anything past `looks` means the last) of `looks`.
double look_threshold(double probability, int look, int looks);

}  // namespace rnx::stats
