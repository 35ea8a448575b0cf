// The store's read queries behind the pages: one configuration's history, environments, recent baselines,
// recent results and stored verdicts. Each reads only indexed rows, so a page stays fast with thousands of runs.
#include "rnx/service/store.hpp"

#include "store_statement.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>

namespace rnx::store {

run_number database::number_from_row(statement& st, int first) {
  run_number n;
  if (!st.is_null(first)) n.ms = st.real(first);
  if (!st.is_null(first + 1)) n.lo_ms = st.real(first + 1);
  if (!st.is_null(first + 2)) n.hi_ms = st.real(first + 2);
  n.unstable = st.integer(first + 3) != 0;
  n.unstable_reason = st.text(first + 4);
  return n;
}

std::vector<config_point> database::config_history(std::int64_t project_id, const config_key& key,
                                                   const config_range& range) {
  std::lock_guard lock(mutex_);
  // Three index-only scans joined here: one SQL join would look up each run's row (which holds its whole
  // document) by id, thousands of random reads; these read about a millisecond of index each.
  auto& runs = prepare(
      "SELECT id, commit_sha, branch, pull_request, created_at, env_id FROM runs WHERE project_id = ?1 "
      "AND (?2 IS NULL OR env_id = ?2) AND (?3 IS NULL OR created_at >= ?3) AND (?4 IS NULL OR created_at < ?4)");
  runs.bind(1, project_id).bind(2, range.env_id).bind(3, range.from).bind(4, range.to);
  std::unordered_map<std::int64_t, config_point> by_run;
  while (runs.step()) {
    config_point p;
    p.run_id = runs.integer(0);
    p.commit = runs.text(1);
    p.branch = runs.text(2);
    if (!runs.is_null(3)) p.pull_request = runs.integer(3);
    p.created_at = runs.text(4);
    p.env_id = runs.text(5);
    by_run.emplace(p.run_id, std::move(p));
  }
  auto& baselines = prepare("SELECT run_id, source FROM baselines WHERE project_id = ?1");
  baselines.bind(1, project_id);
  while (baselines.step()) {
    auto it = by_run.find(baselines.integer(0));
    // A run accepted after being pushed is marked accepted: that is the event the chart must show.
    if (it != by_run.end() && it->second.baseline_source != baseline_kind::accepted) {
      it->second.baseline_source = detail::stored_baseline_kind(baselines.text(1));
    }
  }
  auto& results = prepare("SELECT x.run_id, x.status, x.n, " RNX_NUMBER_COLUMNS
                          " FROM results x WHERE x.kernel = ?1 AND x.runtime = ?2 "
                          "AND x.dtype = ?3 AND x.batch = ?4");
  results.bind(1, std::string_view(key.kernel)).bind(2, std::string_view(key.runtime));
  results.bind(3, std::string_view(key.dtype)).bind(4, key.batch);
  std::vector<config_point> out;
  while (results.step()) {
    auto it = by_run.find(results.integer(0));
    if (it == by_run.end()) continue;  // another project's run, or outside the range
    config_point p = it->second;
    p.status = results.text(1);
    p.n = results.integer(2);
    p.number = number_from_row(results, 3);
    out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end(), [](const config_point& a, const config_point& b) {
    return std::tie(a.env_id, a.run_id) < std::tie(b.env_id, b.run_id);
  });
  return out;
}

std::vector<environment_summary> database::environments(std::int64_t project_id) {
  std::lock_guard lock(mutex_);
  // Counted from an index alone; the device, CPU and time come from each environment's newest run only (reading
  // every run's row would read every document).
  auto& st = prepare(
      "SELECT e.env_id, e.n, r.created_at, e.newest, json_extract(r.document, '$.environment.device'), "
      "json_extract(r.document, '$.environment.cpu') FROM (SELECT env_id, count(*) AS n, max(id) AS newest FROM runs "
      "WHERE project_id = ?1 GROUP BY env_id) e JOIN runs r ON r.id = e.newest ORDER BY e.env_id");
  st.bind(1, project_id);
  std::vector<environment_summary> out;
  while (st.step()) {
    environment_summary e;
    e.env_id = st.text(0);
    e.n_runs = st.integer(1);
    e.last_run_at = st.text(2);
    e.newest_run_id = st.integer(3);
    if (!st.is_null(4)) e.device = st.text(4);
    if (!st.is_null(5)) e.cpu = st.text(5);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<baseline_result> database::recent_baseline_results(std::int64_t project_id, int baselines) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT b.env_id, b.run_id, b.source, b.created_at, x.kernel, x.runtime, x.dtype, x.batch, "
      "b.branch, " RNX_NUMBER_COLUMNS
      " FROM (SELECT * FROM baselines WHERE project_id = ?1 ORDER BY id DESC LIMIT ?2) b "
      "JOIN results x ON x.run_id = b.run_id ORDER BY b.id DESC");
  st.bind(1, project_id).bind(2, std::int64_t{baselines});
  std::vector<baseline_result> out;
  while (st.step()) {
    baseline_result b;
    b.env_id = st.text(0);
    b.run_id = st.integer(1);
    b.source = detail::stored_baseline_kind(st.text(2));
    b.created_at = st.text(3);
    b.key = {st.text(4), st.text(5), st.text(6), st.integer(7)};
    b.branch = st.text(8);
    b.number = number_from_row(st, 9);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<project_listing> database::readable_projects(std::optional<std::string_view> also) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT p.id, p.name, p.created_at, p.public, (SELECT count(*) FROM runs r WHERE r.project_id = p.id), "
      "(SELECT max(created_at) FROM runs r WHERE r.project_id = p.id) FROM projects p "
      "WHERE p.public = 1 OR p.name = ?1 ORDER BY p.name");
  st.bind(1, also);
  std::vector<project_listing> out;
  while (st.step()) {
    project_listing p;
    p.project = project_from_row(st);
    p.n_runs = st.integer(4);
    if (!st.is_null(5)) p.last_run_at = st.text(5);
    out.push_back(std::move(p));
  }
  return out;
}

namespace {

// Columns: v.id, v.run_id, v.kind, v.document, v.created_at, r.commit_sha, r.branch, r.pull_request, r.env_id,
// r.created_at, v.baseline_run_id.
#define RNX_VERDICT_ROW_COLUMNS                                                                                        \
  "v.id, v.run_id, v.kind, v.document, v.created_at, r.commit_sha, r.branch, r.pull_request, r.env_id, r.created_at, " \
  "v.baseline_run_id"

}  // namespace

// One row of RNX_VERDICT_ROW_COLUMNS.
stored_verdict_row database::verdict_row(statement& st) {
  stored_verdict_row v;
  v.id = st.integer(0);
  v.run_id = st.integer(1);
  v.kind = detail::stored_verdict_kind(st.text(2));
  v.document = st.text(3);
  v.created_at = st.text(4);
  v.run.id = v.run_id;
  v.run.commit = st.text(5);
  v.run.branch = st.text(6);
  if (!st.is_null(7)) v.run.pull_request = st.integer(7);
  v.run.env_id = st.text(8);
  v.run.created_at = st.text(9);
  if (!st.is_null(10)) v.baseline_run_id = st.integer(10);
  return v;
}

std::vector<stored_verdict_row> database::recent_verdicts(std::int64_t project_id, int limit) {
  std::lock_guard lock(mutex_);
  // The newest ids first, walking verdicts backwards (`+run_id` keeps SQLite from going through every run's
  // verdicts instead); only those rows' documents are read.
  auto& st = prepare("SELECT " RNX_VERDICT_ROW_COLUMNS
                     " FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE v.id IN (SELECT id FROM verdicts WHERE "
                     "kind IN ('request', 'paired') AND +run_id IN (SELECT id FROM runs WHERE project_id = ?1) "
                     "ORDER BY id DESC "
                     "LIMIT ?2) ORDER BY v.id DESC");
  st.bind(1, project_id).bind(2, std::int64_t{limit});
  std::vector<stored_verdict_row> out;
  while (st.step()) {
    out.push_back(verdict_row(st));
  }
  return out;
}

std::optional<stored_verdict_row> database::verdict_of_run(std::int64_t run_id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT " RNX_VERDICT_ROW_COLUMNS
                     " FROM verdicts v JOIN runs r ON r.id = v.run_id WHERE v.run_id = ?1 "
                     "ORDER BY CASE v.kind WHEN 'paired' THEN 0 WHEN 'request' THEN 1 ELSE 2 END, v.id DESC LIMIT 1");
  st.bind(1, run_id);
  if (!st.step()) return std::nullopt;
  stored_verdict_row v = verdict_row(st);
  st.restart();
  return v;
}

}  // namespace rnx::store
