// Retry with backoff (see retry.hpp).
#include "rnx/common/retry.hpp"

#include <algorithm>
#include <thread>

namespace rnx {

std::chrono::milliseconds retry_backoff::delay_after(int failed_attempt) const {
  std::chrono::milliseconds delay = std::min(cap, first_delay);
  for (int n = 1; n < failed_attempt && delay < cap; ++n) {
    const double next = static_cast<double>(delay.count()) * factor;
    delay = next >= static_cast<double>(cap.count()) ? cap : std::chrono::milliseconds(static_cast<long long>(next));
  }
  return delay;
}

bool sleep_before_retry(std::chrono::milliseconds delay) {
  std::this_thread::sleep_for(delay);
  return true;
}

bool run_with_retries(const retry_backoff& backoff, const std::function<attempt_outcome(int attempt)>& attempt,
                      const retry_wait& wait) {
  for (int n = 1; n <= backoff.attempts; ++n) {
    const attempt_outcome outcome = attempt(n);
    if (outcome.done) return true;
    if (n == backoff.attempts) break;
    if (!wait(outcome.wait ? *outcome.wait : backoff.delay_after(n))) return false;
  }
  return false;
}

}  // namespace rnx
