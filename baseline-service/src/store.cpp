// The SQLite store behind rnx-server and embedded mode: opening, schema migrations, runs, baselines and history.
#include "rnx/service/store.hpp"

#include "store_statement.hpp"

#include "rnx/common/enum_names.hpp"
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/stats/changepoint.hpp"
#include "rnx/stats/run_statistic.hpp"
#include "rnx/stats/summary.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

namespace rnx::store {

namespace {

struct median_interval {
  std::optional<double> median;
  std::optional<double> lo;
  std::optional<double> hi;
};

// The median and its distribution-free 95% interval (rnx::stats::median_with_interval), absent when empty.
median_interval median_of(std::vector<double> samples) {
  if (samples.empty()) return {};
  const stats::median_interval ci = stats::median_with_interval(std::move(samples));
  return {ci.median, ci.lo, ci.hi};
}

// Each step of the schema; index i migrates version i to i + 1. Never edit a shipped step, add one.
constexpr const char* migrations[] = {
    R"sql(
CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE tokens (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  public_id TEXT NOT NULL UNIQUE,
  digest BLOB NOT NULL,
  label TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  commit_sha TEXT NOT NULL,
  branch TEXT NOT NULL,
  base_branch TEXT NOT NULL,
  pull_request INTEGER,
  env_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  received_at TEXT NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL,
  UNIQUE (project_id, digest)
);
CREATE INDEX runs_by_branch ON runs (project_id, branch, env_id, id);
CREATE TABLE results (
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kernel TEXT NOT NULL,
  runtime TEXT NOT NULL,
  dtype TEXT NOT NULL,
  batch INTEGER NOT NULL,
  status TEXT NOT NULL,
  median_ms REAL,
  n INTEGER NOT NULL,
  PRIMARY KEY (run_id, kernel, runtime, dtype, batch)
);
CREATE TABLE baselines (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  branch TEXT NOT NULL,
  env_id TEXT NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  source TEXT NOT NULL CHECK (source IN ('push', 'accepted')),
  accepted_by TEXT NOT NULL,
  reason TEXT NOT NULL,
  token_id INTEGER,
  created_at TEXT NOT NULL
);
CREATE INDEX baselines_lookup ON baselines (project_id, branch, env_id, id);
CREATE INDEX baselines_by_run ON baselines (run_id);
CREATE TABLE verdicts (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  baseline_run_id INTEGER REFERENCES runs(id),
  kind TEXT NOT NULL CHECK (kind IN ('request', 'regression')),
  verdict TEXT NOT NULL,
  document TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX verdicts_by_run ON verdicts (run_id);
CREATE TABLE webhooks (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  url TEXT NOT NULL,
  format TEXT NOT NULL CHECK (format IN ('generic', 'slack', 'teams')),
  created_at TEXT NOT NULL
);
CREATE TABLE webhook_deliveries (
  id INTEGER PRIMARY KEY,
  webhook_id INTEGER NOT NULL REFERENCES webhooks(id),
  run_id INTEGER NOT NULL,
  attempt INTEGER NOT NULL,
  ok INTEGER NOT NULL,
  http_status INTEGER NOT NULL,
  error TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX deliveries_by_webhook ON webhook_deliveries (webhook_id, id);
)sql",
    // 1 -> 2: token scopes; the tokens made before keep upload + accept ("legacy") until re-issued.
    R"sql(
ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'legacy';
)sql",
    // 2 -> 3: the pages: public projects, an interval beside each median, and covering indexes for a
    // configuration's history (its results; the runs' small columns): a run's row holds its whole document, and
    // thousands of them are megabytes to read. Results stored before have no interval
    // (their charts show the median alone).
    R"sql(
ALTER TABLE projects ADD COLUMN public INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN lo_ms REAL;
ALTER TABLE results ADD COLUMN hi_ms REAL;
CREATE INDEX results_by_config ON results (kernel, runtime, dtype, batch, run_id, status, median_ms, lo_ms, hi_ms, n);
CREATE INDEX runs_listing ON runs (project_id, id, env_id, created_at, branch, commit_sha, pull_request);
)sql",
    // 3 -> 4: when a token was revoked, and the end of a rotated token's grace period.
    R"sql(
ALTER TABLE tokens ADD COLUMN revoked_at TEXT;
ALTER TABLE tokens ADD COLUMN expires_at TEXT;
)sql",
    // 4 -> 5: change points. Each result keeps the run statistic verdicts compare and its uncertainty (results
    // stored before have neither: the detector reads their median and interval instead); the change points
    // found in a branch's history, one row each, announced once.
    R"sql(
ALTER TABLE results ADD COLUMN stat_ms REAL;
ALTER TABLE results ADD COLUMN stat_log_se REAL;
CREATE TABLE change_points (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  branch TEXT NOT NULL,
  env_id TEXT NOT NULL,
  kernel TEXT NOT NULL,
  runtime TEXT NOT NULL,
  dtype TEXT NOT NULL,
  batch INTEGER NOT NULL,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  before_run_id INTEGER NOT NULL REFERENCES runs(id),
  detected_run_id INTEGER NOT NULL REFERENCES runs(id),
  ratio REAL NOT NULL,
  ci_lo REAL NOT NULL,
  ci_hi REAL NOT NULL,
  probability REAL NOT NULL,
  n_before INTEGER NOT NULL,
  n_after INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (project_id, branch, env_id, kernel, runtime, dtype, batch, run_id)
);
CREATE INDEX change_points_by_config ON change_points (project_id, kernel, runtime, dtype, batch, env_id, run_id);
)sql",
    // 5 -> 6: sharded runs. The shards of a run group are held here until the group is formed into one run
    // (all N arrived, or its timeout passed); only then is there a run, a baseline or a verdict.
    R"sql(
CREATE TABLE run_groups (
  id INTEGER PRIMARY KEY,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  run_group TEXT NOT NULL,
  shard_count INTEGER NOT NULL,
  first_received INTEGER NOT NULL,
  first_received_at TEXT NOT NULL,
  run_id INTEGER REFERENCES runs(id),
  formed_at TEXT,
  UNIQUE (project_id, run_group)
);
CREATE TABLE shard_uploads (
  group_id INTEGER NOT NULL REFERENCES run_groups(id),
  shard_index INTEGER NOT NULL,
  digest TEXT NOT NULL,
  document TEXT NOT NULL,
  received_at TEXT NOT NULL,
  PRIMARY KEY (group_id, shard_index)
);
)sql",
    // 6 -> 7: paired verdicts (the gate measured base and head side by side and the store re-derived its verdict
    // from the two stored runs). SQLite cannot change a CHECK in place, so the table is copied.
    R"sql(
CREATE TABLE verdicts_v7 (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id),
  baseline_run_id INTEGER REFERENCES runs(id),
  kind TEXT NOT NULL CHECK (kind IN ('request', 'regression', 'paired')),
  verdict TEXT NOT NULL,
  document TEXT NOT NULL,
  created_at TEXT NOT NULL
);
INSERT INTO verdicts_v7 (id, run_id, baseline_run_id, kind, verdict, document, created_at)
  SELECT id, run_id, baseline_run_id, kind, verdict, document, created_at FROM verdicts;
DROP TABLE verdicts;
ALTER TABLE verdicts_v7 RENAME TO verdicts;
CREATE INDEX verdicts_by_run ON verdicts (run_id);
)sql",
    // 7 -> 8: one number everywhere. Each result keeps the interval of the run statistic (the verdict's: each
    // process's median, geometric mean over processes) and whether its run marked it unstable, with the reason,
    // so every page shows the gate's number and its flag without reading documents. Results stored before keep no
    // interval; their unstable flag is read back from their stored documents here.
    R"sql(
ALTER TABLE results ADD COLUMN stat_lo_ms REAL;
ALTER TABLE results ADD COLUMN stat_hi_ms REAL;
ALTER TABLE results ADD COLUMN unstable INTEGER NOT NULL DEFAULT 0;
ALTER TABLE results ADD COLUMN unstable_reason TEXT NOT NULL DEFAULT '';
UPDATE results SET unstable = 1, unstable_reason = coalesce((SELECT json_extract(j.value, '$.message')
    FROM runs r, json_each(r.document, '$.results') j WHERE r.id = results.run_id
    AND json_extract(j.value, '$.kernel') = results.kernel AND json_extract(j.value, '$.runtime') = results.runtime
    AND json_extract(j.value, '$.dtype') = results.dtype AND json_extract(j.value, '$.batch') = results.batch), '')
  WHERE EXISTS (SELECT 1 FROM runs r, json_each(r.document, '$.results') j WHERE r.id = results.run_id
    AND json_extract(j.value, '$.kernel') = results.kernel AND json_extract(j.value, '$.runtime') = results.runtime
    AND json_extract(j.value, '$.dtype') = results.dtype AND json_extract(j.value, '$.batch') = results.batch
    AND json_extract(j.value, '$.unstable') = 1);
DROP INDEX results_by_config;
CREATE INDEX results_by_config ON results (kernel, runtime, dtype, batch, run_id, status, stat_ms, stat_lo_ms,
  stat_hi_ms, median_ms, lo_ms, hi_ms, n, unstable, unstable_reason);
)sql",
};
static_assert(std::size(migrations) == current_schema_version);

}  // namespace

std::string sha256_hex(std::string_view bytes) {
  auto digest = detail::sha256_raw(bytes);
  return detail::to_hex(digest.data(), digest.size());
}

std::string_view to_string(webhook_format f) {
  switch (f) {
    case webhook_format::generic: return "generic";
    case webhook_format::slack: return "slack";
    case webhook_format::teams: return "teams";
  }
  return "generic";
}

std::optional<webhook_format> webhook_format_from_string(std::string_view s) {
  return enum_from_name(s, {webhook_format::generic, webhook_format::slack, webhook_format::teams});
}

using detail::transaction;

std::string detail::stored_time(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

std::chrono::system_clock::time_point database::now() const {
  return clock_ ? clock_() : std::chrono::system_clock::now();
}

std::string database::now_text() const { return detail::stored_time(now()); }

std::int64_t database::now_unix() const {
  return std::chrono::duration_cast<std::chrono::seconds>(now().time_since_epoch()).count();
}

database::database(const std::filesystem::path& path, open_options options)
    : path_(path), clock_(std::move(options.clock)) {
  int rc =
      sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw error(errc::not_found, path.string() + ": cannot open the database (" + message +
                                     "); check that the folder exists and is writable");
  }
  sqlite3_busy_timeout(db_, static_cast<int>(options.busy_timeout.count()));
  sqlite3_extended_result_codes(db_, 1);
  try {
    exec("PRAGMA journal_mode=WAL");
    exec(options.synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL");
    exec("PRAGMA foreign_keys=ON");
    // 32 MiB of page cache (the default is 2 MiB): the pages read the same index and result pages again and again.
    exec("PRAGMA cache_size=-32768");
    migrate();
  } catch (const error& e) {
    statements_.clear();
    sqlite3_close(db_);
    db_ = nullptr;
    throw error(e.code(), path.string() + ": " + e.what());
  }
}

database::~database() {
  statements_.clear();
  if (db_) sqlite3_close(db_);
}

void database::exec(const char* sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message ? message : sqlite3_errmsg(db_);
    sqlite3_free(message);
    throw error(errc::internal, std::string("SQLite failed (is this an rnx database?): ") + text);
  }
}

database::statement& database::prepare(const char* sql) {
  auto it = statements_.find(sql);
  if (it == statements_.end()) it = statements_.emplace(sql, std::make_unique<statement>(db_, sql)).first;
  it->second->restart();
  return *it->second;
}

void database::migrate() {
  exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)");
  transaction tx(db_);
  auto& read = prepare("SELECT max(version) FROM schema_version");
  int version = 0;
  if (read.step() && !read.is_null(0)) version = static_cast<int>(read.integer(0));
  read.restart();
  if (version > current_schema_version) {
    throw error(errc::conflict, "schema version " + std::to_string(version) + " is newer than this rnx (" +
                                    std::to_string(current_schema_version) + "); upgrade rnx");
  }
  for (int v = version; v < current_schema_version; ++v) {
    exec(migrations[v]);
    prepare("INSERT INTO schema_version (version) VALUES (?1)").bind(1, std::int64_t{v + 1}).run();
  }
  tx.commit();
}

int database::schema_version() {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT max(version) FROM schema_version");
  int version = st.step() ? static_cast<int>(st.integer(0)) : 0;
  st.restart();
  return version;
}

run_summary database::summary_from_row(statement& st) {
  // Columns: id, project name, commit, branch, base_branch, pull_request, env_id, created_at, received_at,
  // is_baseline, n_results.
  run_summary s;
  s.id = st.integer(0);
  s.project = st.text(1);
  s.commit = st.text(2);
  s.branch = st.text(3);
  s.base_branch = st.text(4);
  if (!st.is_null(5)) s.pull_request = st.integer(5);
  s.env_id = st.text(6);
  s.created_at = st.text(7);
  s.received_at = st.text(8);
  s.baseline = st.integer(9) != 0;
  s.n_results = st.integer(10);
  return s;
}

std::string_view to_string(verdict_kind k) {
  switch (k) {
    case verdict_kind::request: return "request";
    case verdict_kind::regression: return "regression";
    case verdict_kind::paired: return "paired";
  }
  return "request";
}

std::optional<verdict_kind> verdict_kind_from_string(std::string_view name) {
  return enum_from_name(name, {verdict_kind::request, verdict_kind::regression, verdict_kind::paired});
}

baseline_record database::baseline_from_row(statement& st) {
  // Columns: id, run_id, branch, env_id, source, accepted_by, reason, created_at.
  return {st.integer(0), st.integer(1), st.text(2), st.text(3), detail::stored_baseline_kind(st.text(4)),
          st.text(5),    st.text(6),    st.text(7)};
}

#define RNX_BASELINE_COLUMNS "b.id, b.run_id, b.branch, b.env_id, b.source, b.accepted_by, b.reason, b.created_at"

database::insert_result database::insert_run(std::int64_t project_id, const run_document& run) {
  const auto doc_json = to_json(run);
  std::string document = json::serialize(doc_json);
  // The duplicate check's digest is over Boost.JSON's own serialization, which is what stored runs were hashed
  // with before documents were written with plain decimals: a run re-sent across an upgrade is still 409.
  std::string digest = sha256_hex(boost::json::serialize(doc_json));
  std::string now = now_text();
  std::lock_guard lock(mutex_);
  transaction tx(db_);

  auto& dup = prepare("SELECT id FROM runs WHERE project_id = ?1 AND digest = ?2");
  dup.bind(1, project_id).bind(2, std::string_view(digest));
  if (dup.step()) {
    auto existing = dup.integer(0);
    dup.restart();
    throw error(errc::conflict, "this run document was already stored as run " + std::to_string(existing) +
                                    " (uploads are idempotent; use that id)");
  }

  insert_result out;
  auto& ins = prepare(
      "INSERT INTO runs (project_id, commit_sha, branch, base_branch, pull_request, env_id, created_at, received_at, "
      "digest, document) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)");
  ins.bind(1, project_id).bind(2, std::string_view(run.commit)).bind(3, std::string_view(run.branch));
  ins.bind(4, std::string_view(run.base_branch)).bind(5, run.pull_request).bind(6, std::string_view(run.env.env_id));
  ins.bind(7, std::string_view(run.created_at)).bind(8, std::string_view(now)).bind(9, std::string_view(digest));
  ins.bind(10, std::string_view(document)).run();
  out.run.id = sqlite3_last_insert_rowid(db_);

  auto& res = prepare(
      "INSERT INTO results (run_id, kernel, runtime, dtype, batch, status, median_ms, n, lo_ms, hi_ms, stat_ms, "
      "stat_log_se, stat_lo_ms, stat_hi_ms, unstable, unstable_reason) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, "
      "?10, ?11, ?12, ?13, ?14, ?15, ?16)");
  for (const auto& r : run.results) {
    res.restart();
    res.bind(1, out.run.id).bind(2, std::string_view(r.kernel)).bind(3, std::string_view(r.runtime));
    res.bind(4, std::string_view(r.dtype)).bind(5, r.batch).bind(6, to_string(r.status));
    // The pooled median of all samples, with its interval: kept for results stored before the run statistic was,
    // which the pages fall back to. What every page shows is the run statistic below.
    auto m = median_of(r.samples_ms);
    res.bind(7, m.median).bind(8, static_cast<std::int64_t>(r.samples_ms.size())).bind(9, m.lo).bind(10, m.hi);
    // The statistic verdicts compare, its standard error (log scale: the change points' input) and its interval
    // (the pages').
    std::optional<stats::run_point> point;
    std::optional<stats::run_statistic_interval> stat;
    if (r.status == result_status::ok) {
      point = stats::summarize_run({r.samples_ms, r.groups});
      stat = stats::run_statistic({r.samples_ms, r.groups});
    }
    if (point && stat) {
      res.bind(11, stat->ms).bind(12, point->log_se).bind(13, stat->lo_ms).bind(14, stat->hi_ms);
    } else {
      res.bind_null(11).bind_null(12).bind_null(13).bind_null(14);
    }
    res.bind(15, std::int64_t{r.unstable ? 1 : 0})
        .bind(16, r.unstable ? std::string_view(r.message) : std::string_view(""))
        .run();
  }

  // A push (no pull request) to a named branch is that branch's newest baseline in its environment.
  if (!run.pull_request && !run.branch.empty()) {
    auto& prev = prepare("SELECT " RNX_BASELINE_COLUMNS
                         " FROM baselines b WHERE b.project_id = ?1 AND b.branch = ?2 AND b.env_id = ?3 "
                         "ORDER BY b.id DESC LIMIT 1");
    prev.bind(1, project_id).bind(2, std::string_view(run.branch)).bind(3, std::string_view(run.env.env_id));
    if (prev.step()) out.previous_baseline = baseline_from_row(prev);
    prev.restart();
    auto& base = prepare(
        "INSERT INTO baselines (project_id, branch, env_id, run_id, source, accepted_by, reason, token_id, created_at) "
        "VALUES (?1, ?2, ?3, ?4, 'push', '', 'uploaded from the branch', NULL, ?5)");
    base.bind(1, project_id).bind(2, std::string_view(run.branch)).bind(3, std::string_view(run.env.env_id));
    base.bind(4, out.run.id).bind(5, std::string_view(now)).run();
    out.baseline =
        baseline_record{sqlite3_last_insert_rowid(db_), out.run.id, run.branch, run.env.env_id, baseline_kind::push, "",
                        "uploaded from the branch",     now};
  }
  tx.commit();

  out.run.project = run.project;
  out.run.commit = run.commit;
  out.run.branch = run.branch;
  out.run.base_branch = run.base_branch;
  out.run.pull_request = run.pull_request;
  out.run.env_id = run.env.env_id;
  out.run.created_at = run.created_at;
  out.run.received_at = now;
  out.run.baseline = out.baseline.has_value();
  out.run.n_results = static_cast<std::int64_t>(run.results.size());
  return out;
}

#define RNX_SUMMARY_COLUMNS                                                                                      \
  "r.id, p.name, r.commit_sha, r.branch, r.base_branch, r.pull_request, r.env_id, r.created_at, r.received_at, " \
  "EXISTS (SELECT 1 FROM baselines b WHERE b.run_id = r.id), "                                                   \
  "(SELECT count(*) FROM results x WHERE x.run_id = r.id)"

std::optional<stored_run> database::find_run(std::int64_t run_id) {
  std::string document;
  run_summary summary;
  {
    std::lock_guard lock(mutex_);
    auto& st = prepare("SELECT " RNX_SUMMARY_COLUMNS
                       ", r.document FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = ?1");
    st.bind(1, run_id);
    if (!st.step()) return std::nullopt;
    summary = summary_from_row(st);
    document = st.text(11);
    st.restart();
  }
  // Parsed outside the lock: documents were validated on the way in, this only re-types them.
  auto doc = run_from_json(json::parse(document, "stored run " + std::to_string(run_id)),
                           "stored run " + std::to_string(run_id), kernel_names::as_stored);
  return stored_run{std::move(summary), std::move(doc)};
}

std::optional<run_summary> database::find_run_summary(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  auto& st =
      prepare("SELECT " RNX_SUMMARY_COLUMNS " FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.id = ?1");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  auto summary = summary_from_row(st);
  st.restart();
  return summary;
}

std::optional<std::pair<std::int64_t, std::string>> database::latest_verdict(
    std::int64_t run_id, std::optional<std::int64_t> baseline_run_id, verdict_kind kind) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT id, document FROM verdicts WHERE run_id = ?1 AND baseline_run_id IS ?2 AND kind = ?3 "
      "ORDER BY id DESC LIMIT 1");
  st.bind(1, run_id).bind(2, baseline_run_id).bind(3, to_string(kind));
  if (!st.step()) return std::nullopt;
  std::pair<std::int64_t, std::string> out{st.integer(0), st.text(1)};
  st.restart();
  return out;
}

std::optional<baseline_record> database::newest_baseline(std::int64_t project_id, std::string_view branch,
                                                         std::string_view env_id, std::int64_t exclude_run_id,
                                                         std::int64_t before_id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT " RNX_BASELINE_COLUMNS
                     " FROM baselines b WHERE b.project_id = ?1 AND b.branch = ?2 AND b.env_id = ?3 "
                     "AND b.run_id != ?4 AND b.id < ?5 ORDER BY b.id DESC LIMIT 1");
  st.bind(1, project_id).bind(2, branch).bind(3, env_id).bind(4, exclude_run_id).bind(5, before_id);
  if (!st.step()) return std::nullopt;
  auto record = baseline_from_row(st);
  st.restart();
  return record;
}

std::optional<baseline_record> database::baseline_of_run(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT " RNX_BASELINE_COLUMNS " FROM baselines b WHERE b.run_id = ?1 ORDER BY b.id LIMIT 1");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  auto record = baseline_from_row(st);
  st.restart();
  return record;
}

baseline_record database::accept_baseline(std::int64_t project_id, std::int64_t run_id, std::string_view branch,
                                          std::string_view accepted_by, std::string_view reason,
                                          std::int64_t token_id) {
  std::string now = now_text();
  std::lock_guard lock(mutex_);
  transaction tx(db_);
  auto& run = prepare("SELECT env_id FROM runs WHERE id = ?1 AND project_id = ?2");
  run.bind(1, run_id).bind(2, project_id);
  if (!run.step()) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist in this project");
  std::string env_id = run.text(0);
  run.restart();

  auto& newest = prepare(
      "SELECT b.run_id FROM baselines b WHERE b.project_id = ?1 AND b.branch = ?2 AND b.env_id = ?3 "
      "ORDER BY b.id DESC LIMIT 1");
  newest.bind(1, project_id).bind(2, branch).bind(3, std::string_view(env_id));
  if (newest.step() && newest.integer(0) == run_id) {
    newest.restart();
    throw error(errc::conflict, "run " + std::to_string(run_id) + " is already the newest baseline of branch \"" +
                                    std::string(branch) + "\" in environment " + env_id);
  }
  newest.restart();

  auto& ins = prepare(
      "INSERT INTO baselines (project_id, branch, env_id, run_id, source, accepted_by, reason, token_id, created_at) "
      "VALUES (?1, ?2, ?3, ?4, 'accepted', ?5, ?6, ?7, ?8)");
  ins.bind(1, project_id).bind(2, branch).bind(3, std::string_view(env_id)).bind(4, run_id);
  ins.bind(5, accepted_by).bind(6, reason);
  if (token_id > 0) {
    ins.bind(7, token_id);
  } else {
    ins.bind_null(7);
  }
  ins.bind(8, std::string_view(now)).run();
  baseline_record record{sqlite3_last_insert_rowid(db_),
                         run_id,
                         std::string(branch),
                         env_id,
                         baseline_kind::accepted,
                         std::string(accepted_by),
                         std::string(reason),
                         now};
  tx.commit();
  return record;
}

std::vector<run_summary> database::list_runs(std::int64_t project_id, const run_filter& filter) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT " RNX_SUMMARY_COLUMNS
                     " FROM runs r JOIN projects p ON p.id = r.project_id WHERE r.project_id = ?1 "
                     "AND (?2 IS NULL OR r.branch = ?2) AND (?3 IS NULL OR r.env_id = ?3) ORDER BY r.id DESC LIMIT ?4");
  st.bind(1, project_id).bind(2, filter.branch).bind(3, filter.env_id).bind(4, std::int64_t{filter.limit});
  std::vector<run_summary> out;
  while (st.step()) out.push_back(summary_from_row(st));
  return out;
}

std::vector<history_series> database::history(std::int64_t project_id, const run_filter& filter) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT r.id, r.commit_sha, r.branch, r.created_at, r.env_id, x.kernel, x.runtime, x.dtype, x.batch, x.status, "
      "x.median_ms, x.n, " RNX_NUMBER_COLUMNS
      " FROM results x JOIN runs r ON r.id = x.run_id "
      "WHERE x.run_id IN (SELECT id FROM runs WHERE project_id = ?1 AND (?2 IS NULL OR branch = ?2) "
      "AND (?3 IS NULL OR env_id = ?3) ORDER BY id DESC LIMIT ?4) AND (?5 IS NULL OR x.kernel = ?5) "
      "ORDER BY x.kernel, x.runtime, x.dtype, x.batch, r.env_id, r.id");
  st.bind(1, project_id).bind(2, filter.branch).bind(3, filter.env_id).bind(4, std::int64_t{filter.limit});
  st.bind(5, filter.kernel);
  std::vector<history_series> out;
  while (st.step()) {
    config_key key{st.text(5), st.text(6), st.text(7), st.integer(8)};
    std::string env_id = st.text(4);
    if (out.empty() || !(out.back().key == key) || out.back().env_id != env_id) {
      out.push_back(history_series{key, env_id, {}});
    }
    history_point point;
    point.run_id = st.integer(0);
    point.commit = st.text(1);
    point.branch = st.text(2);
    point.created_at = st.text(3);
    point.status = st.text(9);
    if (!st.is_null(10)) point.median_ms = st.real(10);
    point.n = st.integer(11);
    point.number = number_from_row(st, 12);
    out.back().points.push_back(std::move(point));
  }
  return out;
}

std::int64_t database::store_verdict(std::int64_t run_id, std::optional<std::int64_t> baseline_run_id,
                                     verdict_kind kind, const verdict_document& verdict) {
  std::string document = json::serialize(to_json(verdict));
  std::string now = now_text();
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "INSERT INTO verdicts (run_id, baseline_run_id, kind, verdict, document, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  st.bind(1, run_id).bind(2, baseline_run_id).bind(3, to_string(kind)).bind(4, to_string(verdict.verdict));
  st.bind(5, std::string_view(document)).bind(6, std::string_view(now)).run();
  return sqlite3_last_insert_rowid(db_);
}

std::int64_t database::count_runs() {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT count(*) FROM runs");
  std::int64_t n = st.step() ? st.integer(0) : 0;
  st.restart();
  return n;
}

std::int64_t database::count_visible_runs(std::optional<std::int64_t> own_project) {
  std::lock_guard lock(mutex_);
  auto& st =
      prepare("SELECT count(*) FROM runs r JOIN projects p ON p.id = r.project_id WHERE p.public = 1 OR p.id = ?1");
  st.bind(1, own_project.value_or(-1));
  std::int64_t n = st.step() ? st.integer(0) : 0;
  st.restart();
  return n;
}

std::vector<std::int64_t> database::public_project_ids() {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT id FROM projects WHERE public = 1");
  std::vector<std::int64_t> out;
  while (st.step()) out.push_back(st.integer(0));
  st.restart();
  return out;
}

std::string database::integrity_check() {
  std::lock_guard lock(mutex_);
  auto& st = prepare("PRAGMA integrity_check");
  std::string out;
  while (st.step()) {
    if (!out.empty()) out += "; ";
    out += st.text(0);
  }
  return out;
}

}  // namespace rnx::store
