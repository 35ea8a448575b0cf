// rnx::store::database: the SQLite file that holds projects, tokens, runs, baselines, verdicts and webhooks.
//
// Used by rnx-server and, in embedded mode, directly by `rnx gate --store FILE`:
//
//   rnx::store::database db("baselines.sqlite");          // creates and migrates the file
//   auto project = db.ensure_project(run.project);          // embedded mode has no tokens
//   auto upload = rnx::store::upload_run(db, project.id, run);   // see verdicts.hpp
//   auto verdict = rnx::store::judge_stored_run(db, upload.run.id, policy);
//
// Every method is thread-safe (one connection behind a mutex; SQLite serializes writers anyway) and
// throws rnx::error: conflict (409) for duplicates, not_found (404), internal (500) for SQLite failures.
#pragma once

#include "rnx/common/run_document.hpp"
#include "rnx/common/verdict_document.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace rnx::store {

// The schema version this build writes; older files are migrated forward on open.
inline constexpr int current_schema_version = 8;

struct open_options {
  std::chrono::milliseconds busy_timeout{10000};
  // FULL fsyncs the WAL on every commit (survives power loss); NORMAL survives process crashes only.
  bool synchronous_full = true;
  // The time every stored stamp is taken from (arrivals, creation, expiry and revocation); empty: the system
  // clock. Tests pass their own, so what they read back is what they set.
  std::function<std::chrono::system_clock::time_point()> clock;
};

struct project_info {
  std::int64_t id = 0;
  std::string name;
  std::string created_at;
  bool is_public = false;  // its pages and their JSON are readable without a token
};

// What a token may do (docs/service.md, "Scopes", has the table):
//   upload   - CI on pull requests: upload pull-request runs, ask for verdicts, read;
//   baseline - CI on a protected branch: what upload may, plus push runs, which become the branch's baseline;
//   accept   - maintainers: accept a run as a baseline, upload push runs (moving a baseline is an accept);
//   admin    - everything;
//   legacy   - tokens made before scopes existed: everything, with a warning, until re-issued (never created).
enum class token_scope { upload, baseline, accept, admin, legacy };
std::string_view to_string(token_scope scope);
// One of the names above; anything else is rnx::error(usage) naming the choices.
token_scope parse_token_scope(std::string_view text);

// What a request does with a token, checked against its scope by scope_allows.
enum class token_action {
  upload_pull_request_run,  // a run with a pull_request: stored, never a baseline
  ask_verdict,              // POST /api/v1/runs/{id}/verdict
  move_baseline,            // a push run (no pull_request): it replaces the branch's newest baseline
  accept_run,               // POST /api/v1/baselines
};
std::string_view to_string(token_action action);  // what a message says: "accept a run as a baseline"
// The action's identifier in JSON ("accept_run"; GET /api/v1/projects/{p}/token lists them).
std::string_view identifier(token_action action);
inline constexpr token_action all_token_actions[] = {token_action::upload_pull_request_run, token_action::ask_verdict,
                                                     token_action::move_baseline, token_action::accept_run};
bool scope_allows(token_scope scope, token_action action);
// The scopes that allow `action`, for error messages ("baseline, accept or admin").
std::string scopes_allowing(token_action action);

// A freshly created token: `token` is the only copy of the secret and is never stored.
struct token_grant {
  std::int64_t token_id = 0;
  std::string project;
  std::string label;
  token_scope scope = token_scope::upload;
  std::string token;
};

// A token as `rnx-server admin token list` shows it. The store never has the secret: only its SHA-256 and the
// public id, the 12 hex characters after "rnx_" that every token starts with.
struct token_record {
  std::int64_t id = 0;
  std::string public_id;
  std::int64_t project_id = 0;
  std::string project;
  std::string label;
  token_scope scope = token_scope::upload;
  std::string created_at;
  bool revoked = false;
  std::string revoked_at;  // when; empty while the token is not revoked
  std::string expires_at;  // empty = no end (rotate with a grace period sets one)
};

// Who a valid token is: its project, label and scope.
struct auth_result {
  std::int64_t token_id = 0;
  std::int64_t project_id = 0;
  std::string project;
  std::string label;
  token_scope scope = token_scope::upload;
};

// A token that worked once and has expired: it was rotated with a grace period that has ended.
struct expired_token {
  std::string project;
  std::string expired_at;  // RFC 3339 UTC
};

struct run_summary {
  std::int64_t id = 0;
  std::string project;
  std::string commit;
  std::string branch;
  std::string base_branch;
  std::optional<std::int64_t> pull_request;
  std::string env_id;
  std::string created_at;
  std::string received_at;
  bool baseline = false;  // recorded as a baseline of its branch (push upload or accepted)
  std::int64_t n_results = 0;
};

struct stored_run {
  run_summary summary;
  run_document document;
};

struct baseline_record {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  std::string branch;
  std::string env_id;
  baseline_kind source = baseline_kind::push;  // uploaded from the branch itself, or accepted
  std::string accepted_by;
  std::string reason;
  std::string created_at;
};

struct run_filter {
  std::optional<std::string> branch;
  std::optional<std::string> env_id;
  std::optional<std::string> kernel;  // history only
  int limit = 50;
};

// One run's number for one configuration, as every page shows it: the run statistic the verdict compares (each
// process's median, geometric mean over processes; rnx::stats::run_statistic), its 95% interval, and whether the
// run marked the configuration unstable, with its reason. A result stored before the statistic was kept gives its
// pooled median and that median's interval instead (alike for runs of one process).
struct run_number {
  std::optional<double> ms;
  std::optional<double> lo_ms;
  std::optional<double> hi_ms;
  bool unstable = false;
  std::string unstable_reason;
};

struct history_point {
  std::int64_t run_id = 0;
  std::string commit;
  std::string branch;
  std::string created_at;
  std::string status;
  std::optional<double> median_ms;  // the pooled median of all samples (kept for the API's readers)
  run_number number;                // what the verdict compares, and the pages show
  std::int64_t n = 0;
};

struct history_series {
  config_key key;
  std::string env_id;
  std::vector<history_point> points;  // oldest first
};

enum class webhook_format { generic, slack, teams };
std::string_view to_string(webhook_format f);
std::optional<webhook_format> webhook_format_from_string(std::string_view s);

// What the pages (rnx::pages) read; the queries are in store_pages.cpp.
struct config_point {
  std::int64_t run_id = 0;
  std::string commit;
  std::string branch;
  std::optional<std::int64_t> pull_request;
  std::string created_at;
  std::string env_id;
  std::string status;
  run_number number;
  std::int64_t n = 0;
  baseline_kind baseline_source = baseline_kind::unknown;  // push, accepted, or unknown: not a baseline
};

// Created_at bounds (RFC 3339 text compares in time order) and an environment, each optional.
struct config_range {
  std::optional<std::string> env_id;
  std::optional<std::string> from;  // inclusive
  std::optional<std::string> to;    // exclusive
};

struct environment_summary {
  std::string env_id;
  std::string device;
  std::string cpu;
  std::int64_t n_runs = 0;
  std::string last_run_at;  // created_at of its newest run
  std::int64_t newest_run_id = 0;
};

// One configuration's result in a baseline run (newest baselines first).
struct baseline_result {
  config_key key;
  std::string branch;  // the branch it is a baseline of
  std::string env_id;
  std::int64_t run_id = 0;
  baseline_kind source = baseline_kind::push;
  std::string created_at;
  run_number number;
};

// A project as the landing page lists it.
struct project_listing {
  project_info project;
  std::int64_t n_runs = 0;
  std::string last_run_at;  // "" without runs
};

// One run of a branch's own history (push runs, no pull request) for the change-point detector, oldest first:
// the run statistic and its log standard error, or for results stored before they were kept, the median and a
// log standard error from its interval (0 when unknown).
struct branch_point {
  std::int64_t run_id = 0;
  std::string commit;
  std::string created_at;
  double stat_ms = 0;
  double log_se = 0;
};

// A change point found in one configuration's history of a branch, in one environment.
struct change_record {
  std::int64_t id = 0;
  std::string project;
  std::string branch;
  std::string env_id;
  config_key key;
  std::int64_t run_id = 0;         // the first run after the step
  std::string commit;              // its commit
  std::int64_t before_run_id = 0;  // the last run before it
  std::string before_commit;
  std::int64_t detected_run_id = 0;  // the newest run when it was found
  double ratio = 1;                  // after / before
  double ci_lo = 1;
  double ci_hi = 1;
  double probability = 0;
  std::int64_t n_before = 0;
  std::int64_t n_after = 0;
  std::string created_at;  // of the first run after the step
  std::string detected_at;
};

struct change_filter {
  std::optional<std::string> branch;
  std::optional<std::string> env_id;
  std::optional<std::string> kernel;
  std::optional<config_key> config;
  int limit = 100;
};

// How a stored verdict came to be: asked for through the API or CLI (request), a new baseline against the previous
// one (regression), or the gate's side-by-side comparison of a pull request's base and head runs (paired). The
// verdicts table's kind column holds the names.
enum class verdict_kind { request, regression, paired };
std::string_view to_string(verdict_kind k);
std::optional<verdict_kind> verdict_kind_from_string(std::string_view name);

struct stored_verdict_row {
  std::int64_t id = 0;
  std::int64_t run_id = 0;
  verdict_kind kind = verdict_kind::request;
  std::string document;  // rnx.verdict/v1 JSON text
  std::string created_at;
  run_summary run;                              // id, commit, branch, pull_request, env_id, created_at filled
  std::optional<std::int64_t> baseline_run_id;  // the stored run it compared with (a paired verdict's base side too)
};

struct webhook {
  std::int64_t id = 0;
  std::int64_t project_id = 0;
  std::string url;
  webhook_format format = webhook_format::generic;
};

struct delivery_record {
  std::int64_t id = 0;
  std::int64_t webhook_id = 0;
  std::int64_t run_id = 0;
  int attempt = 0;
  bool ok = false;
  int http_status = 0;  // 0 when no response came back
  std::string error;
  std::string created_at;
};

// A sharded run's group as the store holds it while its shards arrive (store_groups.cpp, run_groups.hpp).
struct run_group_record {
  std::string group;
  std::int64_t count = 0;              // N
  std::int64_t first_received = 0;     // Unix seconds of the first shard's arrival (the timeout runs from it)
  std::string first_received_at;       // the same, RFC 3339
  std::optional<std::int64_t> run_id;  // the run formed from the arrived shards; unset while the group is open
  std::string formed_at;
  std::vector<std::int64_t> arrived;  // shard indexes, ascending
};

class database {
 public:
  explicit database(const std::filesystem::path& path, open_options options = {});
  ~database();
  database(const database&) = delete;
  database& operator=(const database&) = delete;

  const std::filesystem::path& path() const { return path_; }
  int schema_version();

  // Project names: 1-64 characters of [A-Za-z0-9._-], not starting with '.' or '-'.
  static void validate_project_name(std::string_view name);
  project_info create_project(std::string_view name);  // conflict if it exists
  project_info ensure_project(std::string_view name);  // embedded mode: create on first use
  std::optional<project_info> find_project(std::string_view name);
  std::optional<project_info> find_project(std::int64_t id);
  // Public projects' pages are readable without a token; not_found for an unknown project.
  void set_project_public(std::string_view name, bool is_public);

  // legacy cannot be created (rnx::error(usage)).
  token_grant create_token(std::string_view project, std::string_view label, token_scope scope = token_scope::upload);
  // nullopt for an unknown, malformed, revoked or expired token; the digest comparison is constant-time.
  std::optional<auth_result> authenticate(std::string_view token);
  // For a token that authenticate() refused because its grace period ended: its project and when it ended. Only the
  // whole token matches (its digest, compared in constant time), so only whoever holds it learns either; nullopt
  // for any other token (unknown, malformed, revoked, or still valid).
  std::optional<expired_token> find_expired(std::string_view token);
  // Every token (of one project when given), oldest first; never a secret.
  std::vector<token_record> list_tokens(std::optional<std::string_view> project = std::nullopt);
  // `which` names one token: its public id, "rnx_<public id>" or the whole token. The token stops
  // authenticating at once (the next request with it is 401). not_found when nothing matches, conflict
  // when it is revoked already.
  token_record revoke_token(std::string_view which);
  // A new token for the same project and label, with `scope` (empty: the old token's; a legacy token needs
  // one). The old token is revoked at once (grace 0) or keeps working until now + grace, so CI secrets can
  // be swapped without a window of failed uploads.
  struct rotation {
    token_grant replacement;
    token_record old;
  };
  rotation rotate_token(std::string_view which, std::chrono::seconds grace, std::optional<token_scope> scope = {});

  // Stores the run and its per-configuration summary in one transaction. A run without a
  // pull_request is a push to `branch` and becomes that branch's newest baseline for its env_id.
  // An identical document stored before is a conflict naming the existing id.
  struct insert_result {
    run_summary run;
    std::optional<baseline_record> baseline;           // set when the run became a baseline
    std::optional<baseline_record> previous_baseline;  // the baseline it replaced, if any
  };
  insert_result insert_run(std::int64_t project_id, const run_document& run);

  std::optional<stored_run> find_run(std::int64_t run_id);
  // The summary alone, without parsing the stored document (auth checks, listings).
  std::optional<run_summary> find_run_summary(std::int64_t run_id);
  // Newest baseline of (project, branch, env_id) other than `exclude_run_id`, with id < before_id.
  std::optional<baseline_record> newest_baseline(std::int64_t project_id, std::string_view branch,
                                                 std::string_view env_id, std::int64_t exclude_run_id = 0,
                                                 std::int64_t before_id = INT64_MAX);
  std::optional<baseline_record> baseline_of_run(std::int64_t run_id);
  // Records `run_id` as the newest baseline of `branch`; conflict when it already is.
  baseline_record accept_baseline(std::int64_t project_id, std::int64_t run_id, std::string_view branch,
                                  std::string_view accepted_by, std::string_view reason, std::int64_t token_id);

  std::vector<run_summary> list_runs(std::int64_t project_id, const run_filter& filter);
  std::vector<history_series> history(std::int64_t project_id, const run_filter& filter);

  // A paired verdict is the gate's comparison re-derived by the store.
  std::int64_t store_verdict(std::int64_t run_id, std::optional<std::int64_t> baseline_run_id, verdict_kind kind,
                             const verdict_document& verdict);
  // The newest stored verdict of that kind for run_id against exactly that baseline (nullopt = none):
  // (verdict id, rnx.verdict/v1 JSON text).
  std::optional<std::pair<std::int64_t, std::string>> latest_verdict(std::int64_t run_id,
                                                                     std::optional<std::int64_t> baseline_run_id,
                                                                     verdict_kind kind);
  std::int64_t count_runs();
  // Runs of public projects, and of `own_project` when given (what /metrics shows to that viewer).
  std::int64_t count_visible_runs(std::optional<std::int64_t> own_project);
  std::vector<std::int64_t> public_project_ids();

  // For the pages (store_pages.cpp). One configuration's points over time, by environment then run id.
  std::vector<config_point> config_history(std::int64_t project_id, const config_key& key, const config_range& range);
  std::vector<environment_summary> environments(std::int64_t project_id);
  // The results of the newest `baselines` baseline records, newest first.
  std::vector<baseline_result> recent_baseline_results(std::int64_t project_id, int baselines);
  // The public projects, plus `also` (the caller's token's project) when given, by name.
  std::vector<project_listing> readable_projects(std::optional<std::string_view> also);
  // Newest stored verdicts of the project's runs ("request" and "paired" kinds), newest first.
  std::vector<stored_verdict_row> recent_verdicts(std::int64_t project_id, int limit);
  // The newest stored verdict of a run: a "paired" verdict (what the pull request's gate decided) before a
  // "request" one, before a "regression" one.
  std::optional<stored_verdict_row> verdict_of_run(std::int64_t run_id);

  // Change points (store_changes.cpp). The newest `limit` ok results of `key` from push runs of `branch` in
  // `env_id` up to run `until_run_id`, as the detector reads them, oldest first.
  std::vector<branch_point> branch_history(std::int64_t project_id, std::string_view branch, std::string_view env_id,
                                           const config_key& key, std::int64_t until_run_id, int limit);
  // Stores a change point; nullopt when the same one (configuration, branch, environment, first run) is stored.
  std::optional<std::int64_t> insert_change_point(std::int64_t project_id, const change_record& change);
  // Stored change points, newest first step first; commits and project filled.
  std::vector<change_record> change_points(std::int64_t project_id, const change_filter& filter);

  webhook add_webhook(std::int64_t project_id, std::string_view url, webhook_format format);
  std::vector<webhook> webhooks(std::int64_t project_id);
  void log_delivery(const delivery_record& record);
  std::vector<delivery_record> deliveries(std::int64_t webhook_id);

  // Shards of a sharded run (store_groups.cpp). store_shard holds one shard's document in its group (made on the
  // first shard): the identical document again is a no-op; another document for a held shard, a different N, or a
  // shard of a group already formed is a conflict naming the group and what to do.
  run_group_record store_shard(std::int64_t project_id, const run_document& shard);
  std::optional<run_group_record> find_run_group(std::int64_t project_id, std::string_view group);
  std::vector<run_document> shard_documents(std::int64_t project_id, std::string_view group);
  // Marks the group formed as run `run_id`; conflict when it was formed already (the other run id is named).
  void mark_group_formed(std::int64_t project_id, std::string_view group, std::int64_t run_id);
  // The id of a stored run with exactly this document (insert_run's digest), if any.
  std::optional<std::int64_t> find_run_by_document(std::int64_t project_id, const run_document& run);

  // "ok" or SQLite's list of problems.
  std::string integrity_check();

 private:
  class statement;
  statement& prepare(const char* sql);
  static stored_verdict_row verdict_row(statement& st);  // one row of the pages' verdict columns
  void exec(const char* sql);
  void migrate();
  run_summary summary_from_row(statement& st);
  token_record token_from_row(statement& st);
  static project_info project_from_row(statement& st);          // columns: id, name, created_at, public
  static run_number number_from_row(statement& st, int first);  // RNX_NUMBER_COLUMNS from column `first`
  // These two expect mutex_ held. find_token_locked refuses (conflict) a revoked token.
  token_grant insert_token(const project_info& project, std::string_view label, token_scope scope);
  token_record find_token_locked(std::string_view which);
  baseline_record baseline_from_row(statement& st);
  std::optional<run_group_record> find_run_group_locked(std::int64_t project_id, std::string_view group);

  // The store's clock (open_options::clock), its time as stored (RFC 3339, seconds) and in Unix seconds.
  std::chrono::system_clock::time_point now() const;
  std::string now_text() const;
  std::int64_t now_unix() const;

  std::filesystem::path path_;
  std::function<std::chrono::system_clock::time_point()> clock_;
  std::mutex mutex_;
  sqlite3* db_ = nullptr;
  // Keyed by the SQL literal's address: every call site passes a string literal.
  std::map<const char*, std::unique_ptr<statement>> statements_;
};

// A consistent copy of a live database, made with SQLite's online backup API (a reader: a running server
// keeps serving and writing). Written to a temp file beside `dest`, checked (integrity, schema version),
// fsynced and renamed into place, so `dest` is either the whole backup or untouched.
struct backup_options {
  bool overwrite = false;  // replace an existing dest (the default refuses, so a backup never clobbers one)
};
struct backup_result {
  std::filesystem::path path;
  std::uintmax_t bytes = 0;
  int schema_version = 0;
  std::int64_t projects = 0;
  std::int64_t runs = 0;
};
backup_result backup_database(const std::filesystem::path& source, const std::filesystem::path& dest,
                              backup_options options = {});

// Lowercase hex SHA-256 of bytes (tokens, document digests).
std::string sha256_hex(std::string_view bytes);

}  // namespace rnx::store
