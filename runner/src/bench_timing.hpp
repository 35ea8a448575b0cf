// Where a bench's time goes: the ledger the orchestrator's lanes fill from their workers' events.
#pragma once

#include "rnx/runner/bench.hpp"

#include <boost/json/object.hpp>

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
  // A worker's "ready": `launched` when its process was started, `released` when it got its job (the same for a
  // worker that was not prestarted). Its "clock" object (seconds on the same monotonic clock: main, python,
  // released, device, ready; null when absent) splits the start.
  void on_ready(const boost::json::value& clock, clock_type::time_point launched, clock_type::time_point released);
  // A configuration's "result" event: its warm-up, sampling and "phases_ms" (load, inputs, bind, measure; null
  // when absent). A joint event's times are the pair's.
  void on_result(std::optional<double> warmup_ms, double sampling_ms, const boost::json::value& phases,
                 const std::string& label, const std::string& measured_on);
  bench_timing take(double total_s, int lanes);

 private:
  std::mutex mutex_;
  bench_timing t_;
  std::map<std::string, std::size_t> config_index_;  // label -> t_.configs
};

}  // namespace rnx::runner::detail
