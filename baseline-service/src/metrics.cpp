// Prometheus text rendering of the service's counters.
#include "rnx/service/metrics.hpp"

#include <sstream>

namespace rnx::service {

namespace {

// Label values are route templates and fixed words, but escape anyway: the format breaks on a stray quote.
std::string label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void metrics::histogram::observe(double seconds) {
  std::size_t i = 0;
  while (i < latency_buckets.size() && seconds > latency_buckets[i]) ++i;
  if (i < latency_buckets.size()) ++counts[i];
  ++count;
  sum += seconds;
}

void metrics::render_histogram(std::ostream& os, std::string_view name, const std::string& labels, const histogram& h) {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < latency_buckets.size(); ++i) {
    cumulative += h.counts[i];
    os << name << "_bucket{" << labels << "le=\"" << latency_buckets[i] << "\"} " << cumulative << "\n";
  }
  os << name << "_bucket{" << labels << "le=\"+Inf\"} " << h.count << "\n";
  // The same labels without the trailing comma, and no braces at all when there are none.
  const std::string plain = labels.empty() ? "" : "{" + labels.substr(0, labels.size() - 1) + "}";
  os << name << "_sum" << plain << " " << h.sum << "\n";
  os << name << "_count" << plain << " " << h.count << "\n";
}

void metrics::add(histogram& into, const histogram& h) {
  for (std::size_t i = 0; i < h.counts.size(); ++i) into.counts[i] += h.counts[i];
  into.count += h.count;
  into.sum += h.sum;
}

void metrics::observe_request(std::string_view route, std::string_view method, int status, double seconds,
                              std::int64_t project) {
  std::lock_guard lock(mutex_);
  ++requests_[{project, std::string(route), std::string(method), status}];
  latency_[{project, std::string(route)}].observe(seconds);
}

void metrics::request_started(double waited_seconds) {
  --queued_requests_;
  std::lock_guard lock(mutex_);
  queue_wait_.observe(waited_seconds);
}

void metrics::count_run_stored(std::int64_t project) {
  std::lock_guard lock(mutex_);
  ++runs_stored_[project];
}

void metrics::count_verdict(std::int64_t project, overall outcome, std::string_view kind) {
  std::lock_guard lock(mutex_);
  ++verdicts_[{project, std::string(to_string(outcome)), std::string(kind)}];
}

void metrics::count_webhook_delivery(std::int64_t project, bool ok) {
  std::lock_guard lock(mutex_);
  ++webhook_deliveries_[{project, ok}];
}

std::string metrics::render(const view& v) const {
  auto visible = [&v](std::int64_t project) { return project == no_project || (v.may_see && v.may_see(project)); };
  std::ostringstream os;
  std::lock_guard lock(mutex_);
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t> requests;
  for (const auto& [key, n] : requests_) {
    const auto& [project, route, method, status] = key;
    if (visible(project)) requests[{route, method, status}] += n;
  }
  std::map<std::string, histogram> latency;
  for (const auto& [key, h] : latency_) {
    if (visible(key.first)) add(latency[key.second], h);
  }
  std::map<std::pair<std::string, std::string>, std::uint64_t> verdicts;
  for (const auto& [key, n] : verdicts_) {
    const auto& [project, outcome, kind] = key;
    if (visible(project)) verdicts[{outcome, kind}] += n;
  }
  std::uint64_t runs_stored = 0;
  for (const auto& [project, n] : runs_stored_) runs_stored += visible(project) ? n : 0;
  std::uint64_t webhook_ok = 0;
  std::uint64_t webhook_failed = 0;
  for (const auto& [key, n] : webhook_deliveries_) {
    if (visible(key.first)) (key.second ? webhook_ok : webhook_failed) += n;
  }

  os << "# HELP rnx_http_requests_total HTTP requests by route template, method and status.\n"
     << "# TYPE rnx_http_requests_total counter\n";
  for (const auto& [key, n] : requests) {
    const auto& [route, method, status] = key;
    os << "rnx_http_requests_total{route=\"" << label(route) << "\",method=\"" << label(method) << "\",status=\""
       << status << "\"} " << n << "\n";
  }
  os << "# HELP rnx_http_request_duration_seconds Time to answer a complete request, from the moment a request "
        "thread takes it (the wait before is rnx_request_queue_wait_seconds).\n"
     << "# TYPE rnx_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency) {
    render_histogram(os, "rnx_http_request_duration_seconds", "route=\"" + label(route) + "\",", h);
  }
  os << "# HELP rnx_request_queue_wait_seconds Time a complete request waited for a request thread.\n"
     << "# TYPE rnx_request_queue_wait_seconds histogram\n";
  render_histogram(os, "rnx_request_queue_wait_seconds", "", queue_wait_);
  os << "# HELP rnx_request_queue_depth Complete requests waiting for a request thread now.\n"
     << "# TYPE rnx_request_queue_depth gauge\n"
     << "rnx_request_queue_depth " << queued_requests_.load() << "\n";
  os << "# HELP rnx_runs_stored_total Runs stored since the server started.\n"
     << "# TYPE rnx_runs_stored_total counter\n"
     << "rnx_runs_stored_total " << runs_stored << "\n";
  os << "# HELP rnx_runs Runs held in the database.\n"
     << "# TYPE rnx_runs gauge\n"
     << "rnx_runs " << v.runs_in_store << "\n";
  os << "# HELP rnx_verdicts_total Verdicts by outcome and kind (request or regression).\n"
     << "# TYPE rnx_verdicts_total counter\n";
  for (const auto& [key, n] : verdicts) {
    os << "rnx_verdicts_total{outcome=\"" << key.first << "\",kind=\"" << key.second << "\"} " << n << "\n";
  }
  os << "# HELP rnx_webhook_deliveries_total Webhook delivery attempts by result.\n"
     << "# TYPE rnx_webhook_deliveries_total counter\n"
     << "rnx_webhook_deliveries_total{result=\"ok\"} " << webhook_ok << "\n"
     << "rnx_webhook_deliveries_total{result=\"failed\"} " << webhook_failed << "\n";
  os << "# HELP rnx_regression_checks_lost_total Regression checks after a stored baseline that did not run "
        "(failed: an error, logged; dropped: the check queue was full). The runs stay stored.\n"
     << "# TYPE rnx_regression_checks_lost_total counter\n"
     << "rnx_regression_checks_lost_total{reason=\"failed\"} " << regression_checks_failed_.load() << "\n"
     << "rnx_regression_checks_lost_total{reason=\"dropped\"} " << regression_checks_dropped_.load() << "\n";
  os << "# HELP rnx_open_connections Client connections open now.\n"
     << "# TYPE rnx_open_connections gauge\n"
     << "rnx_open_connections " << open_connections_.load() << "\n";
  os << "# HELP rnx_unauthenticated_requests Requests without a token being read or answered now (at most "
        "--max-unauthenticated; more are answered 503).\n"
     << "# TYPE rnx_unauthenticated_requests gauge\n"
     << "rnx_unauthenticated_requests " << unauthenticated_requests_.load() << "\n";
  os << "# HELP rnx_refused_connections_total Connections closed at once because a limit was reached "
        "(--max-connections-per-address for their address, or every slot held by connections being answered).\n"
     << "# TYPE rnx_refused_connections_total counter\n"
     << "rnx_refused_connections_total " << refused_connections_.load() << "\n";
  os << "# HELP rnx_evicted_connections_total Unauthenticated connections closed while waiting for a request, to "
        "let a new connection in (--max-unauthenticated-connections or --max-connections full).\n"
     << "# TYPE rnx_evicted_connections_total counter\n"
     << "rnx_evicted_connections_total " << evicted_connections_.load() << "\n";
  os << "# HELP rnx_idle_closed_connections_total Kept-alive connections closed after waiting longer than "
        "--idle-timeout for their next request.\n"
     << "# TYPE rnx_idle_closed_connections_total counter\n"
     << "rnx_idle_closed_connections_total " << idle_closed_connections_.load() << "\n";
  return os.str();
}

}  // namespace rnx::service
