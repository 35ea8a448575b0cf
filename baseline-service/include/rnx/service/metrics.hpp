// Prometheus counters and histograms of rnx-server: requests by route and status, latency, runs, verdicts.
//
// What a project did (its requests, runs, verdicts, webhook deliveries) is counted under the project, and shown only
// to whom may see it: /metrics without a token counts public projects and requests that carried no valid token; with
// a valid token, its own project as well. The server's own figures (connections, the request queue) are for all.
#pragma once

#include "rnx/common/verdict_document.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
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

  // A project's id, or no_project for what no valid token (hence no project) did.
  static constexpr std::int64_t no_project = 0;

  // `route` is the route template ("/api/v1/runs/{id}/verdict"), never the raw path, so labels stay bounded;
  // `project` is the project of the token the request carried.
  void observe_request(std::string_view route, std::string_view method, int status, double seconds,
                       std::int64_t project = no_project);
  void count_run_stored(std::int64_t project);
  void count_verdict(std::int64_t project, overall outcome, std::string_view kind);
  void count_webhook_delivery(std::int64_t project, bool ok);
  // A regression check after a stored baseline that did not run: it failed, or its queue was full. The run itself
  // stays stored; the check is the part lost, so it is logged and counted (no project: the count is the server's).
  enum class lost_check { failed, dropped };
  void count_regression_check_lost(lost_check why) {
    ++(why == lost_check::dropped ? regression_checks_dropped_ : regression_checks_failed_);
  }
  void connection_opened() { ++open_connections_; }
  void connection_closed() { --open_connections_; }
  void connection_refused() { ++refused_connections_; }
  void connection_evicted() { ++evicted_connections_; }
  void connection_idle_closed() { ++idle_closed_connections_; }
  // A request without a token holds one of --max-unauthenticated's places from its headers to its answer's end.
  void unauthenticated_request_started() { ++unauthenticated_requests_; }
  void unauthenticated_request_ended() { --unauthenticated_requests_; }
  // A complete request waits for a request thread (queued), then is answered (started, after `waited`).
  void request_queued() { ++queued_requests_; }
  void request_started(double waited_seconds);

  // Who is looking: the projects whose figures it may see (no_project's always), and the runs in the database of
  // those projects (read from the database by the caller).
  struct view {
    std::function<bool(std::int64_t project)> may_see;
    std::int64_t runs_in_store = 0;
  };
  // The text exposition format (version 0.0.4).
  std::string render(const view& v) const;

 private:
  struct histogram {
    std::array<std::uint64_t, latency_buckets.size()> counts{};  // non-cumulative; summed on render
    std::uint64_t count = 0;
    double sum = 0;
    void observe(double seconds);
  };
  // `labels` is empty or `name="value",` pairs, each with its trailing comma.
  static void render_histogram(std::ostream& os, std::string_view name, const std::string& labels, const histogram& h);
  static void add(histogram& into, const histogram& h);
  mutable std::mutex mutex_;
  // Each by project first, summed over the projects a viewer may see when rendered.
  std::map<std::tuple<std::int64_t, std::string, std::string, int>, std::uint64_t> requests_;
  std::map<std::pair<std::int64_t, std::string>, histogram> latency_;
  std::map<std::tuple<std::int64_t, std::string, std::string>, std::uint64_t> verdicts_;
  std::map<std::int64_t, std::uint64_t> runs_stored_;
  std::map<std::pair<std::int64_t, bool>, std::uint64_t> webhook_deliveries_;
  histogram queue_wait_;
  std::atomic<std::int64_t> open_connections_{0};
  std::atomic<std::int64_t> queued_requests_{0};
  std::atomic<std::int64_t> unauthenticated_requests_{0};
  std::atomic<std::uint64_t> regression_checks_failed_{0};
  std::atomic<std::uint64_t> regression_checks_dropped_{0};
  std::atomic<std::uint64_t> refused_connections_{0};
  std::atomic<std::uint64_t> evicted_connections_{0};
  std::atomic<std::uint64_t> idle_closed_connections_{0};
};

}  // namespace rnx::service
