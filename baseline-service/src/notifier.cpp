// Regression checks and change points after baseline uploads, and webhook delivery (generic, Slack, Teams) with
// retries and a log.
#include "rnx/service/notifier.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/retry.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"

#include <iostream>
#include <sstream>

namespace rnx::service {

namespace bj = boost::json;

namespace {

std::vector<const config_verdict*> slower_configs(const verdict_document& v) {
  std::vector<const config_verdict*> out;
  for (const auto& c : v.configs) {
    if (c.result == decision::slower || c.result == decision::broken) out.push_back(&c);
  }
  return out;
}

std::string describe(const config_verdict& c) {
  std::ostringstream os;
  os << c.key.label() << ": " << to_string(c.result);
  if (c.ratio) os << " (x" << *c.ratio << ")";
  return os.str();
}

}  // namespace

std::string webhook_payload(store::webhook_format format, const std::string& project, const store::run_summary& run,
                            const verdict_document& verdict) {
  auto slower = slower_configs(verdict);
  std::string baseline = verdict.baseline ? verdict.baseline->commit : std::string("?");
  std::string title = "rnx: performance regression on " + project + "/" + run.branch + " at " + run.commit;
  std::string summary = std::to_string(slower.size()) + " configuration(s) slower or broken than baseline " + baseline +
                        " in environment " + run.env_id;
  switch (format) {
    case store::webhook_format::generic: {
      bj::array regressions;
      for (auto* c : slower) {
        regressions.push_back(bj::object{{"config", c->key.label()},
                                         {"decision", to_string(c->result)},
                                         {"ratio", c->ratio ? bj::value(*c->ratio) : bj::value(nullptr)}});
      }
      bj::object o{{"event", "regression"},
                   {"project", project},
                   {"branch", run.branch},
                   {"commit", run.commit},
                   {"run_id", std::to_string(run.id)},
                   {"env_id", run.env_id},
                   {"regressions", std::move(regressions)},
                   {"verdict", to_json(verdict)}};
      return json::serialize(o);
    }
    case store::webhook_format::slack: {
      std::string lines = "*" + title + "*\n" + summary;
      for (auto* c : slower) lines += "\n• " + describe(*c);
      bj::object section{{"type", "section"}, {"text", bj::object{{"type", "mrkdwn"}, {"text", lines}}}};
      return json::serialize(bj::object{{"text", title}, {"blocks", bj::array{section}}});
    }
    case store::webhook_format::teams: {
      bj::array facts;
      for (auto* c : slower) {
        facts.push_back(bj::object{{"name", c->key.label()},
                                   {"value", std::string(to_string(c->result)) +
                                                 (c->ratio ? " x" + std::to_string(*c->ratio) : std::string())}});
      }
      bj::object card{{"@type", "MessageCard"},
                      {"@context", "https://schema.org/extensions"},
                      {"summary", title},
                      {"themeColor", "D70000"},
                      {"title", title},
                      {"text", summary},
                      {"sections", bj::array{bj::object{{"facts", std::move(facts)}}}}};
      return json::serialize(card);
    }
  }
  return "{}";
}

namespace {

// "1.031 [1.018, 1.045]": a ratio with its 95% interval, three decimals.
std::string ratio_text(double ratio, double lo, double hi) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(3);
  os << ratio << " [" << lo << ", " << hi << "]";
  return os.str();
}

}  // namespace

std::string change_payload(store::webhook_format format, const store::change_record& c) {
  const bool slower = c.ratio > 1;
  const std::string title = "rnx: " + c.key.label() + " became " + (slower ? "slower" : "faster") + " on " + c.project +
                            "/" + c.branch + " at " + c.commit;
  std::ostringstream summary;
  summary.setf(std::ios::fixed);
  summary.precision(2);
  summary << "change point in environment " << c.env_id << ": ratio " << ratio_text(c.ratio, c.ci_lo, c.ci_hi)
          << ", probability " << c.probability << "; first run after it " << c.run_id << " (" << c.commit
          << "), last before it " << c.before_run_id << " (" << c.before_commit << ")";
  switch (format) {
    case store::webhook_format::generic: {
      bj::object o = store::change_json(c).as_object();
      o["event"] = "change_point";
      return json::serialize(o);
    }
    case store::webhook_format::slack: {
      bj::object section{{"type", "section"},
                         {"text", bj::object{{"type", "mrkdwn"}, {"text", "*" + title + "*\n" + summary.str()}}}};
      return json::serialize(bj::object{{"text", title}, {"blocks", bj::array{section}}});
    }
    case store::webhook_format::teams: {
      bj::array facts{bj::object{{"name", "ratio [95% CI]"}, {"value", ratio_text(c.ratio, c.ci_lo, c.ci_hi)}},
                      bj::object{{"name", "probability"}, {"value", std::to_string(c.probability)}},
                      bj::object{{"name", "first commit after"}, {"value", c.commit}},
                      bj::object{{"name", "last commit before"}, {"value", c.before_commit}},
                      bj::object{{"name", "environment"}, {"value", c.env_id}}};
      bj::object card{{"@type", "MessageCard"},
                      {"@context", "https://schema.org/extensions"},
                      {"summary", title},
                      {"themeColor", slower ? "D70000" : "2E7D32"},
                      {"title", title},
                      {"text", summary.str()},
                      {"sections", bj::array{bj::object{{"facts", std::move(facts)}}}}};
      return json::serialize(card);
    }
  }
  return "{}";
}

notifier::notifier(store::database& db, metrics& m, notifier_options options)
    : db_(db), metrics_(m), options_(options) {
  worker_ = std::thread([this] { work(); });
}

notifier::~notifier() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void notifier::enqueue(store::upload_outcome upload) {
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= options_.max_queue) {
      std::cerr << "rnx-server: regression check for run " << upload.run.id << " dropped: " << queue_.size()
                << " checks already queued\n";
      metrics_.count_regression_check_lost(metrics::lost_check::dropped);
      return;
    }
    queue_.push_back(std::move(upload));
  }
  wake_.notify_one();
}

void notifier::wait_idle() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return (queue_.empty() && !busy_) || stopping_; });
}

void notifier::work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) break;
    auto job = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    try {
      // One line per finished check: what operators read, and what the service tests wait on.
      const std::string found = check_and_notify(job);
      std::cerr << "rnx-server: regression check for run " << job.run.id << " done: " << found << "\n";
    } catch (const std::exception& e) {
      // A failed check is logged; it must never take the server down.
      std::cerr << "rnx-server: regression check for run " << job.run.id << " failed: " << e.what() << "\n";
      metrics_.count_regression_check_lost(metrics::lost_check::failed);
    }
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  busy_ = false;
  idle_.notify_all();
}

std::string notifier::check_and_notify(const store::upload_outcome& upload) {
  try {
    announce_changes(upload);
  } catch (const std::exception& e) {
    std::cerr << "rnx-server: change-point scan after run " << upload.run.id << " failed: " << e.what() << "\n";
  }
  auto judged = store::regression_check(db_, upload, options_.policy);
  if (!judged) return "nothing to judge (not a push to its base branch, or no baseline before it)";
  auto project = db_.find_project(upload.run.project);
  if (!project) return "its project is gone";
  metrics_.count_verdict(project->id, judged->verdict.verdict, to_string(store::verdict_kind::regression));
  const std::string verdict(to_string(judged->verdict.verdict));
  if (slower_configs(judged->verdict).empty()) return verdict + ", no webhook sent";
  const auto hooks = db_.webhooks(project->id);
  for (const auto& hook : hooks) {
    deliver(hook, upload.run, webhook_payload(hook.format, project->name, upload.run, judged->verdict));
  }
  return verdict + ", " + std::to_string(hooks.size()) + " webhook(s) delivered or given up";
}

void notifier::announce_changes(const store::upload_outcome& upload) {
  if (!upload.baseline) return;
  auto changes = store::detect_changes(db_, upload.run.id);
  if (changes.empty()) return;
  auto project = db_.find_project(upload.run.project);
  if (!project) return;
  for (const auto& change : changes) {
    for (const auto& hook : db_.webhooks(project->id)) deliver(hook, upload.run, change_payload(hook.format, change));
  }
}

void notifier::deliver(const store::webhook& hook, const store::run_summary& run, const std::string& body) {
  const retry_backoff backoff{options_.attempts, options_.first_backoff};
  // Every failed delivery is worth another try; a server that is stopping ends the wait and the retries.
  const retry_wait wait_unless_stopping = [this](std::chrono::milliseconds delay) {
    std::unique_lock lock(mutex_);
    return !wake_.wait_for(lock, delay, [this] { return stopping_; });
  };
  run_with_retries(
      backoff,
      [&](int attempt) {
        store::delivery_record record;
        record.webhook_id = hook.id;
        record.run_id = run.id;
        record.attempt = attempt;
        try {
          http::request_options ro;
          ro.timeout = options_.timeout;
          ro.verify_peer = options_.verify_peer;
          auto r = http::request("POST", hook.url, {{"Content-Type", "application/json"}}, body, ro);
          record.http_status = r.status;
          record.ok = r.status >= 200 && r.status < 300;
          if (!record.ok) record.error = "HTTP " + std::to_string(r.status) + ": " + r.body.substr(0, 200);
        } catch (const std::exception& e) {
          record.error = e.what();
        }
        db_.log_delivery(record);
        metrics_.count_webhook_delivery(hook.project_id, record.ok);
        return record.ok ? attempt_outcome::success() : attempt_outcome::again();
      },
      wait_unless_stopping);
}

}  // namespace rnx::service
