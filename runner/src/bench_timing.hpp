// Where a bench's time goes: the ledger the orchestrator's lanes fill from their workers' events.
#pragma once

#include "rnx/runner/bench.hpp"

#include "worker_protocol.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace rnx::runner::detail {

using clock_type = std::chrono::steady_clock;

// Thread-safe: every device lane adds to one ledger.
class timing_ledger {
 public:
  void worker_started();
  // A worker's ready event: `launched` when its process was started, `released` when it got its job (the same for
  // a worker that was not prestarted). Its clock (seconds on the same monotonic clock) splits the start.
  void on_ready(const worker_clock& clock, clock_type::time_point launched, clock_type::time_point released);
  // A configuration's result event: its warm-up, sampling and phases. A joint event's times are the pair's.
  void on_result(std::optional<double> warmup_ms, double sampling_ms, const config_phases& phases,
                 const std::string& label, const std::string& measured_on);
  bench_timing take(double total_s, int lanes);

 private:
  std::mutex mutex_;
  bench_timing t_;
  std::map<std::string, std::size_t> config_index_;  // label -> t_.configs
};

}  // namespace rnx::runner::detail
