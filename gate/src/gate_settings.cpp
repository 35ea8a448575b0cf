// Manifest, policy and backend resolution for `rnx gate` and `rnx accept`.
#include "gate_settings.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"

#include <cstdlib>
#include <filesystem>

namespace rnx::gate {

std::string_view to_string(gate_mode m) {
  switch (m) {
    case gate_mode::stored: return "stored";
    case gate_mode::paired: return "paired";
    case gate_mode::confirmed: return "confirmed";
  }
  return "stored";
}

std::optional<gate_mode> gate_mode_from_string(std::string_view text) {
  for (gate_mode m : {gate_mode::stored, gate_mode::paired, gate_mode::confirmed}) {
    if (text == to_string(m)) return m;
  }
  return std::nullopt;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

void add_backend_flags(CLI::App& cmd, backend_flags& flags) {
  cmd.add_option("--service-url", flags.service_url,
                 "rnx-server URL (else RNX_SERVICE_URL, else [service] url; none = the embedded store)");
  cmd.add_option("--store", flags.store, "Embedded SQLite store used when no service is configured")
      ->default_str(".rnx/baselines.db");
  cmd.add_option("--service-timeout", flags.timeout_s, "Seconds per phase of a service call before WARN")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  cmd.add_option("--group-timeout", flags.group_timeout_s,
                 "Embedded store: seconds after a run group's first shard before it is judged without the missing "
                 "ones (the service: rnx-server --shard-timeout)")
      ->check(CLI::Range(0.0, 7 * 86400.0))
      ->capture_default_str();
}

service_setting resolve_service_url(const backend_flags& flags, const manifest* m) {
  if (!flags.service_url.empty()) return {flags.service_url, "--service-url"};
  if (auto url = env_or_empty("RNX_SERVICE_URL"); !url.empty()) return {url, "RNX_SERVICE_URL"};
  if (m && !m->service_url.empty()) return {m->service_url, m->source + " [service] url"};
  return {};
}

backend_choice open_backend(const backend_flags& flags, const manifest* m) {
  const auto [url, url_source] = resolve_service_url(flags, m);
  if (!url.empty() && !flags.store.empty()) {
    throw error(errc::usage, "both a service (" + url_source + " = " + url + ") and --store " + flags.store +
                                 " are given; use one: the service, or the embedded store");
  }
  backend_choice choice;
  if (!url.empty()) {
    if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) {
      throw error(errc::usage, url_source + " \"" + url + "\" is not an http:// or https:// URL");
    }
    auto timeout = std::chrono::milliseconds(static_cast<long long>(flags.timeout_s * 1000));
    choice.backend = make_service_backend(url, env_or_empty("RNX_TOKEN"), timeout);
    return choice;
  }
  choice.embedded = true;
  choice.backend = make_embedded_backend(flags.store.empty() ? ".rnx/baselines.db" : flags.store,
                                         std::chrono::seconds(static_cast<long long>(flags.group_timeout_s)));
  return choice;
}

namespace {

// The URL without its path ("http://host:8722/api/v1" -> "http://host:8722"); the URL itself when it has none.
std::string root_of(const std::string& url) {
  const std::size_t scheme = url.find("://");
  const std::size_t path = scheme == std::string::npos ? std::string::npos : url.find('/', scheme + 3);
  return path == std::string::npos ? url : url.substr(0, path);
}

}  // namespace

std::string describe(const service_problem& problem) {
  return problem.why + "; the service URL " + problem.url + " (from " + problem.source + "); " + problem.fix;
}

std::optional<service_problem> find_service_problem(const backend_flags& flags, const manifest* m) {
  const service_setting setting = resolve_service_url(flags, m);
  if (setting.url.empty()) return std::nullopt;
  auto backend = open_backend(flags, m).backend;
  service_problem problem{{}, setting.url, setting.source, {}};
  try {
    backend->check_reachable();
    return std::nullopt;
  } catch (const http::request_failure& f) {
    problem.why = "cannot reach the service: " + f.cause();
    problem.fix = "fix: set " + setting.source + " to the address of a running rnx-server, or start it there";
  } catch (const error& e) {
    problem.why = "the service failed its health check: " + std::string(e.what());
    const std::string root = root_of(setting.url);
    while (!problem.url.empty() && problem.url.back() == '/') problem.url.pop_back();
    if (e.code() == errc::not_found && root != problem.url) {
      problem.fix = "fix: set " + setting.source + " to the server's root URL " + root + " (no path)";
    } else if (e.code() == errc::not_found) {
      problem.fix = "fix: set " + setting.source + " to the root URL of an rnx-server (it answers GET /healthz)";
    } else {
      problem.fix = "fix: see the service's log, or set " + setting.source + " to a working rnx-server";
    }
    problem.url = setting.url;
  }
  return problem;
}

service_error_action resolve_service_error_action(const std::string& flag, const manifest* m) {
  const std::string env = env_or_empty("RNX_ON_SERVICE_ERROR");
  const std::string& text = flag.empty() ? env : flag;
  if (!text.empty()) {
    auto action = service_error_action_from_string(text);
    const std::string name = flag.empty() ? "RNX_ON_SERVICE_ERROR (the on-service-error input)" : "--on-service-error";
    if (!action) throw error(errc::usage, name + " \"" + text + "\" must be warn or fail");
    return *action;
  }
  return m ? m->on_service_error : service_error_action::warn;
}

void check_access_before_measuring(const backend_flags& flags, const manifest* m, const std::string& project, bool push,
                                   bool fork) {
  if (resolve_service_url(flags, m).url.empty() || project.empty()) return;
  auto backend = open_backend(flags, m).backend;
  try {
    backend->check_access(project, push);
  } catch (const error& e) {
    if (e.code() == errc::unavailable) return;
    if (fork && e.code() == errc::unauthorized) return;
    throw;
  }
}

void add_policy_flags(CLI::App& cmd, policy_flags& flags) {
  add_policy_options(
      cmd, flags.overrides,
      {policy_option::rope, policy_option::probability, policy_option::min_samples, policy_option::resamples,
       policy_option::statistic, policy_option::on_abstain, policy_option::report_only},
      "rnx.toml's [gate]");
  cmd.add_option("--runner", flags.runner, "Use the thresholds of [gate.runners.LABEL] in rnx.toml");
}

resolved_policy resolve_policy(const manifest* m, const policy_flags& flags, const std::string& runner_environment) {
  resolved_policy out;
  if (m) out.policy = m->gate;
  if (!flags.runner.empty()) {
    if (!m || !m->gate_runners.count(flags.runner)) {
      std::string known;
      if (m) {
        for (const auto& [label, policy] : m->gate_runners) known += (known.empty() ? "" : ", ") + label;
      }
      throw error(errc::usage, "--runner " + flags.runner + ": rnx.toml has no [gate.runners." + flags.runner +
                                   "] table" +
                                   (known.empty() ? std::string(" (it has none)") : " (it has: " + known + ")") +
                                   "; add one or drop --runner");
    }
    out.policy = m->gate_runners.at(flags.runner);
    out.runner_label = flags.runner;
  } else if (m && !runner_environment.empty() && m->gate_runners.count(runner_environment)) {
    out.policy = m->gate_runners.at(runner_environment);
    out.runner_label = runner_environment;
  }
  out.policy = with_overrides(out.policy, flags.overrides);
  return out;
}

std::optional<manifest> load_manifest_if_present(const std::string& path, bool required) {
  if (!required && !std::filesystem::exists(path)) return std::nullopt;
  return load_manifest(path);
}

}  // namespace rnx::gate
