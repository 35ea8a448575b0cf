// Stratified Student-t variates for the between-process level of the two-level posterior.
#pragma once

#include <memory>
#include <vector>

namespace rnx::stats::detail {

// The quantiles of Student's t with `dof` degrees of freedom at the midpoints (i + 1/2) / n, i = 0 .. n-1.
// A posterior with n draws takes its t variates as a random permutation of these instead of n independent
// ones: each draw is still t-distributed, the set follows the law exactly (less Monte Carlo noise), and a
// draw costs a table look-up instead of two logarithms, a sine and a cosine. Computed once per (dof, n) and
// shared; safe to call from several threads.
std::shared_ptr<const std::vector<double>> student_t_strata(int dof, int n);

}  // namespace rnx::stats::detail
