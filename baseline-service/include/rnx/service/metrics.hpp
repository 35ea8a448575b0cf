// Prometheus counters and histograms of rnx-server: requests by route and status, latency, runs, verdicts.
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <ostream>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace rnx::service {

class metrics {
 public:
  // Upper bounds (seconds) of the latency histogram's buckets; +Inf is implied.
  static constexpr std::array<double, 12> latency_buckets = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                             0.1,   0.25,   0.5,   1.0,  2.5,   5.0};

  // `route` is the route template ("/api/v1/runs/{id}/verdict"), never the raw path, so labels stay bounded.
  void observe_request(std::string_view route, std::string_view method, int status, double seconds);
  void count_run_stored();
  void count_verdict(overall outcome, std::string_view kind);
  void count_webhook_delivery(bool ok);
  void connection_opened() { ++open_connections_; }
  void connection_closed() { --open_connections_; }
  void connection_refused() { ++refused_connections_; }
  void connection_evicted() { ++evicted_connections_; }
  // A complete request waits for a request thread (queued), then is answered (started, after `waited`).
  void request_queued() { ++queued_requests_; }
  void request_started(double waited_seconds);

  // The text exposition format (version 0.0.4). runs_in_store is read from the database by the caller.
  std::string render(std::int64_t runs_in_store) const;

 private:
  struct histogram {
    std::array<std::uint64_t, latency_buckets.size()> counts{};  // non-cumulative; summed on render
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  // `labels` is empty or `name="value",` pairs, each with its trailing comma.
  static void render_histogram(std::ostream& os, std::string_view name, const std::string& labels, const histogram& h);
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests_;
  std::map<std::string, histogram> latency_;
  std::map<std::pair<std::string, std::string>, std::uint64_t> verdicts_;
  std::uint64_t runs_stored_ = 0;
  std::uint64_t webhook_ok_ = 0;
  std::uint64_t webhook_failed_ = 0;
  histogram queue_wait_;
  std::atomic<std::int64_t> open_connections_{0};
  std::atomic<std::int64_t> queued_requests_{0};
  std::atomic<std::uint64_t> refused_connections_{0};
  std::atomic<std::uint64_t> evicted_connections_{0};
};

}  // namespace rnx::service
