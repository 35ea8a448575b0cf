// The one retry with backoff of rnx: the webhook notifier, the optimizer's LLM providers and its pull request all
// try again through run_with_retries. The caller decides what a failure is and whether it is worth another try;
// the wait is injectable, so a test never really waits and a server can cut a wait short when it stops.
//
//   rnx::retry_backoff b{3, std::chrono::milliseconds(500)};        // 3 attempts, waits of 500 ms then 1 s
//   std::string reply;
//   bool ok = rnx::run_with_retries(b, [&](int attempt) {
//     auto r = send();
//     if (r.ok) { reply = r.body; return rnx::attempt_outcome::success(); }
//     if (!worth_retrying(r)) throw rnx::error(...);                  // not retryable: ends it at once
//     return rnx::attempt_outcome::again();                           // or again(server's Retry-After)
//   });
#pragma once

#include <chrono>
#include <functional>
#include <optional>

namespace rnx {

// How often to try and how long to wait between tries. Attempt n (1-based) that fails waits delay_after(n) before
// attempt n + 1: first_delay after the first, each later delay the one before times `factor`, at most `cap`.
struct retry_backoff {
  int attempts = 1;  // tries in all; below 1 makes none
  std::chrono::milliseconds first_delay{0};
  double factor = 2.0;
  std::chrono::milliseconds cap = std::chrono::milliseconds::max();

  std::chrono::milliseconds delay_after(int failed_attempt) const;
};

// What one attempt ended in, when it did not throw: done, or worth another try (after `wait` when given, as a
// server's Retry-After asks; else after the backoff's delay). A failure that is not worth retrying is the
// attempt's own exception, which run_with_retries lets through at once.
struct attempt_outcome {
  bool done = false;
  std::optional<std::chrono::milliseconds> wait;

  static attempt_outcome success() { return {true, std::nullopt}; }
  static attempt_outcome again(std::optional<std::chrono::milliseconds> wait = std::nullopt) { return {false, wait}; }
};

// Waits `delay` before the next attempt; returns false to give up instead (the caller is stopping).
using retry_wait = std::function<bool(std::chrono::milliseconds)>;

// The real wait: sleeps this thread for `delay`, then returns true.
bool sleep_before_retry(std::chrono::milliseconds delay);

// Calls attempt(1), attempt(2), ... until one is done, backoff.attempts have been made, or `wait` gives up; waits
// only between attempts, never after the last. Returns whether an attempt was done. Exceptions of `attempt` pass
// through and end the retries.
bool run_with_retries(const retry_backoff& backoff, const std::function<attempt_outcome(int attempt)>& attempt,
                      const retry_wait& wait = sleep_before_retry);

}  // namespace rnx
