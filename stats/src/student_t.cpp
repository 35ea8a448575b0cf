#include "student_t.hpp"

#include <boost/math/distributions/students_t.hpp>

#include <map>
#include <mutex>
#include <utility>

namespace rnx::stats::detail {

std::shared_ptr<const std::vector<double>> student_t_strata(int dof, int n) {
  static std::mutex mutex;
  static std::map<std::pair<int, int>, std::shared_ptr<const std::vector<double>>> cache;
  {
    std::lock_guard lock(mutex);
    if (auto it = cache.find({dof, n}); it != cache.end()) return it->second;
  }
  auto table = std::make_shared<std::vector<double>>(static_cast<std::size_t>(n));
  const boost::math::students_t_distribution<double> law(dof);
  // Symmetric: the upper half mirrors the lower one, so only half the (costly) inversions are done.
  for (int i = 0; i < (n + 1) / 2; ++i) {
    const double q = boost::math::quantile(law, (i + 0.5) / n);
    (*table)[static_cast<std::size_t>(i)] = q;
    (*table)[static_cast<std::size_t>(n - 1 - i)] = -q;
  }
  if (n % 2) (*table)[static_cast<std::size_t>(n / 2)] = 0;
  std::lock_guard lock(mutex);
  // Policies bound n (resamples) and dof (processes - 1); a cap still keeps odd inputs from growing the cache.
  if (cache.size() < 256) cache.emplace(std::make_pair(dof, n), table);
  return table;
}

}  // namespace rnx::stats::detail
