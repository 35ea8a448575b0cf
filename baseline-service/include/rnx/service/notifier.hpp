// The background worker that runs the regression check and the change-point scan after each stored baseline run
// and delivers webhooks.
#pragma once

#include "rnx/service/changes.hpp"
#include "rnx/service/metrics.hpp"
#include "rnx/service/verdicts.hpp"

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace rnx::service {

struct notifier_options {
  int attempts = 3;                                            // per webhook and event
  std::chrono::milliseconds first_backoff{500};                // doubles after each failed attempt
  std::chrono::milliseconds timeout{std::chrono::seconds(5)};  // per HTTP phase
  std::size_t max_queue = 1000;                                // pending checks beyond this are logged and dropped
  gate_policy policy;                                          // used for the baseline-vs-previous comparison
  bool verify_peer = true;
};

// The body posted to a webhook for a regression verdict, in that format's shape.
std::string webhook_payload(store::webhook_format format, const std::string& project, const store::run_summary& run,
                            const verdict_document& verdict);

// The body posted to a webhook for a change point found in a branch's history, in that format's shape.
std::string change_payload(store::webhook_format format, const store::change_record& change);

class notifier {
 public:
  notifier(store::database& db, metrics& m, notifier_options options);
  ~notifier();  // finishes the check in flight, then stops; queued checks are dropped
  notifier(const notifier&) = delete;
  notifier& operator=(const notifier&) = delete;

  // Never blocks on the network and never throws for a full queue: the upload must not fail.
  void enqueue(store::upload_outcome upload);
  // Blocks until the queue is empty and nothing is in flight (tests, orderly shutdown).
  void wait_idle();

 private:
  void work();
  // Returns what it found, in a few words, for the log line of a finished check.
  std::string check_and_notify(const store::upload_outcome& upload);
  // Scans the run's configurations for change points and sends each new one to every webhook, once.
  void announce_changes(const store::upload_outcome& upload);
  void deliver(const store::webhook& hook, const store::run_summary& run, const std::string& body);

  store::database& db_;
  metrics& metrics_;
  notifier_options options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  std::deque<store::upload_outcome> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace rnx::service
