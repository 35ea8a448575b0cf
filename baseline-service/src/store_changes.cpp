// The store's change-point queries: a branch's history of one configuration as the detector reads it, and the
// change points found in it.
#include "rnx/service/store.hpp"

#include "store_statement.hpp"

#include "rnx/common/error.hpp"
#include "rnx/stats/changepoint.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>

namespace rnx::store {

std::vector<branch_point> database::branch_history(std::int64_t project_id, std::string_view branch,
                                                   std::string_view env_id, const config_key& key,
                                                   std::int64_t until_run_id, int limit) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT r.id, r.commit_sha, r.created_at, x.stat_ms, x.stat_log_se, x.median_ms, x.lo_ms, x.hi_ms "
      "FROM runs r JOIN results x ON x.run_id = r.id WHERE r.project_id = ?1 AND r.branch = ?2 AND r.env_id = ?3 "
      "AND r.pull_request IS NULL AND x.kernel = ?4 AND x.runtime = ?5 AND x.dtype = ?6 AND x.batch = ?7 "
      "AND x.status = 'ok' AND r.id <= ?9 ORDER BY r.id DESC LIMIT ?8");
  st.bind(1, project_id).bind(2, branch).bind(3, env_id).bind(4, std::string_view(key.kernel));
  st.bind(5, std::string_view(key.runtime)).bind(6, std::string_view(key.dtype)).bind(7, key.batch);
  st.bind(8, std::int64_t{limit}).bind(9, until_run_id);
  std::vector<branch_point> out;
  while (st.step()) {
    branch_point p;
    p.run_id = st.integer(0);
    p.commit = st.text(1);
    p.created_at = st.text(2);
    if (!st.is_null(3) && st.real(3) > 0) {
      p.stat_ms = st.real(3);
      p.log_se = st.is_null(4) ? 0.0 : st.real(4);
    } else if (!st.is_null(5)) {
      // A result stored before the run statistic was kept: its median and order-statistic interval.
      std::optional<double> lo, hi;
      if (!st.is_null(6)) lo = st.real(6);
      if (!st.is_null(7)) hi = st.real(7);
      auto point = stats::point_from_interval(st.real(5), lo, hi);
      if (!point) continue;
      p.stat_ms = std::exp(point->log_stat);
      p.log_se = point->log_se;
    } else {
      continue;
    }
    out.push_back(std::move(p));
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::optional<std::int64_t> database::insert_change_point(std::int64_t project_id, const change_record& c) {
  std::string now = now_text();
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "INSERT OR IGNORE INTO change_points (project_id, branch, env_id, kernel, runtime, dtype, batch, run_id, "
      "before_run_id, detected_run_id, ratio, ci_lo, ci_hi, probability, n_before, n_after, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)");
  st.bind(1, project_id).bind(2, std::string_view(c.branch)).bind(3, std::string_view(c.env_id));
  st.bind(4, std::string_view(c.key.kernel)).bind(5, std::string_view(c.key.runtime));
  st.bind(6, std::string_view(c.key.dtype)).bind(7, c.key.batch).bind(8, c.run_id).bind(9, c.before_run_id);
  st.bind(10, c.detected_run_id).bind(11, c.ratio).bind(12, c.ci_lo).bind(13, c.ci_hi).bind(14, c.probability);
  st.bind(15, c.n_before).bind(16, c.n_after).bind(17, std::string_view(now)).run();
  if (sqlite3_changes(db_) == 0) return std::nullopt;
  return sqlite3_last_insert_rowid(db_);
}

std::vector<change_record> database::change_points(std::int64_t project_id, const change_filter& filter) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT c.id, p.name, c.branch, c.env_id, c.kernel, c.runtime, c.dtype, c.batch, c.run_id, a.commit_sha, "
      "c.before_run_id, b.commit_sha, c.detected_run_id, c.ratio, c.ci_lo, c.ci_hi, c.probability, c.n_before, "
      "c.n_after, a.created_at, c.created_at FROM change_points c JOIN projects p ON p.id = c.project_id "
      "JOIN runs a ON a.id = c.run_id JOIN runs b ON b.id = c.before_run_id WHERE c.project_id = ?1 "
      "AND (?2 IS NULL OR c.branch = ?2) AND (?3 IS NULL OR c.env_id = ?3) AND (?4 IS NULL OR c.kernel = ?4) "
      "AND (?5 IS NULL OR (c.runtime = ?5 AND c.dtype = ?6 AND c.batch = ?7)) "
      "ORDER BY c.run_id DESC, c.id DESC LIMIT ?8");
  st.bind(1, project_id).bind(2, filter.branch).bind(3, filter.env_id);
  st.bind(4, filter.config ? std::optional<std::string>(filter.config->kernel) : filter.kernel);
  if (filter.config) {
    st.bind(5, std::string_view(filter.config->runtime)).bind(6, std::string_view(filter.config->dtype));
    st.bind(7, filter.config->batch);
  } else {
    st.bind_null(5).bind_null(6).bind_null(7);
  }
  st.bind(8, std::int64_t{filter.limit});
  std::vector<change_record> out;
  while (st.step()) {
    change_record c;
    c.id = st.integer(0);
    c.project = st.text(1);
    c.branch = st.text(2);
    c.env_id = st.text(3);
    c.key = {st.text(4), st.text(5), st.text(6), st.integer(7)};
    c.run_id = st.integer(8);
    c.commit = st.text(9);
    c.before_run_id = st.integer(10);
    c.before_commit = st.text(11);
    c.detected_run_id = st.integer(12);
    c.ratio = st.real(13);
    c.ci_lo = st.real(14);
    c.ci_hi = st.real(15);
    c.probability = st.real(16);
    c.n_before = st.integer(17);
    c.n_after = st.integer(18);
    c.created_at = st.text(19);
    c.detected_at = st.text(20);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace rnx::store
