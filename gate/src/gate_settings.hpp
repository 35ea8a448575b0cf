// Settings shared by `rnx gate` and `rnx accept`: the manifest, the policy in force and the backend.
#pragma once

#include "gate_backend.hpp"

#include "rnx/common/manifest.hpp"
#include "rnx/common/policy_options.hpp"
#include "rnx/common/verdict_document.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace rnx::gate {

// What `rnx gate` compares the head with: the stored baseline, the base revision measured beside it in this job
// (paired), or the stored baseline with what it calls slower measured again paired (confirmed).
enum class gate_mode { stored, paired, confirmed };
std::string_view to_string(gate_mode m);
std::optional<gate_mode> gate_mode_from_string(std::string_view text);

// The environment variable `name`, or "" when it is unset.
std::string env_or_empty(const char* name);

// Where runs go. Empty strings are "not given", so that an action input left blank falls through.
struct backend_flags {
  std::string service_url;        // --service-url, else RNX_SERVICE_URL, else [service] url
  std::string store;              // --store PATH: the embedded SQLite store
  double timeout_s = 30;          // per HTTP phase, service calls
  double group_timeout_s = 3600;  // embedded store: a run group is formed this long after its first shard
};
void add_backend_flags(CLI::App& cmd, backend_flags& flags);

// The service URL in force ("" = the embedded store), and where it came from, for messages.
struct service_setting {
  std::string url;
  std::string source;
};
service_setting resolve_service_url(const backend_flags& flags, const manifest* m);

struct backend_choice {
  std::unique_ptr<baseline_backend> backend;
  bool embedded = false;
};
// --service-url / RNX_SERVICE_URL / [service] url picks the service (token from RNX_TOKEN); otherwise
// the embedded store at --store or .rnx/baselines.db. Both flags at once is a usage error.
backend_choice open_backend(const backend_flags& flags, const manifest* m);

// Why the service in force cannot be used, where its URL came from and what fixes it; the gate's report leads with
// it ("no verdict: ...") wherever the service cannot be used, whatever the cause (refused, a host that does not
// resolve, TLS or the wrong scheme, a wrong path, an error answer, a timeout).
struct service_problem {
  std::string why;     // "connection refused: nothing listens on 127.0.0.1:1"
  std::string url;     // the URL in force
  std::string source;  // where it was set: "--service-url", "RNX_SERVICE_URL", "rnx.toml [service] url"
  std::string fix;     // what to do, in words that name the flag or key
};
// "WHY; the service URL URL (from SOURCE); FIX": the words after the report's "no verdict: ".
std::string describe(const service_problem& problem);

// Before `rnx gate` measures or uploads anything: with a service, does it answer GET /healthz? nullopt when it does,
// and for the embedded store.
std::optional<service_problem> find_service_problem(const backend_flags& flags, const manifest* m);

// --on-service-error, else RNX_ON_SERVICE_ERROR (the action's on-service-error input), else [gate]
// on_service_error, else warn; a value that is neither warn nor fail is a usage error naming where it came from.
service_error_action resolve_service_error_action(const std::string& flag, const manifest* m);

// Before `rnx gate` measures anything: with a service, is RNX_TOKEN a token of `project` that may store this job's
// run (a push run when `push`)? Throws the service's unauthorized / forbidden error (exit 2) unless `fork` (a pull
// request from a fork gets no secrets: measured and reported anyway); a service that cannot be asked is left to
// the upload, which reports the outage. Nothing to check for the embedded store.
void check_access_before_measuring(const backend_flags& flags, const manifest* m, const std::string& project, bool push,
                                   bool fork);

// Threshold overrides as action inputs pass them: strings, "" = keep the manifest's value.
struct policy_flags {
  policy_overrides overrides;
  std::string runner;  // a [gate.runners.LABEL] of rnx.toml
};
void add_policy_flags(CLI::App& cmd, policy_flags& flags);

struct resolved_policy {
  gate_policy policy;
  std::string runner_label;  // "" when [gate] itself is in force
};
// [gate] of the manifest, then [gate.runners.LABEL] (LABEL = --runner, else RUNNER_ENVIRONMENT when
// the manifest has such a table: "github-hosted" / "self-hosted"), then the flags; validated.
resolved_policy resolve_policy(const manifest* m, const policy_flags& flags, const std::string& runner_environment);

// Loads the manifest when it exists; a path the user named explicitly must exist.
std::optional<manifest> load_manifest_if_present(const std::string& path, bool required);

}  // namespace rnx::gate
