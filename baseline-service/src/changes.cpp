// Change-point detection over the store after each stored run of a branch (see changes.hpp).
#include "rnx/service/changes.hpp"

#include "rnx/common/error.hpp"

#include <boost/json.hpp>

#include <algorithm>
#include <cmath>
#include <string>

namespace rnx::store {

namespace {

// The stored change points of one configuration's history, as indices into that history (those that fall inside).
std::vector<stats::known_change> known_in(database& db, std::int64_t project_id, const std::string& branch,
                                          const std::string& env_id, const config_key& key,
                                          const std::vector<branch_point>& history) {
  change_filter filter;
  filter.branch = branch;
  filter.env_id = env_id;
  filter.config = key;
  filter.limit = 1000;
  std::vector<stats::known_change> out;
  for (const auto& c : db.change_points(project_id, filter)) {
    auto at = std::find_if(history.begin(), history.end(), [&](const branch_point& p) { return p.run_id == c.run_id; });
    if (at != history.end()) out.push_back({static_cast<std::size_t>(at - history.begin()), c.ratio > 1});
  }
  return out;
}

change_record record_of(const stats::change_point& c, const std::vector<branch_point>& history, const stored_run& run,
                        const config_key& key) {
  change_record r;
  r.project = run.summary.project;
  r.branch = run.summary.branch;
  r.env_id = run.summary.env_id;
  r.key = key;
  r.run_id = history[c.index].run_id;
  r.commit = history[c.index].commit;
  r.created_at = history[c.index].created_at;
  r.before_run_id = history[c.index - 1].run_id;
  r.before_commit = history[c.index - 1].commit;
  r.detected_run_id = history.back().run_id;
  r.ratio = c.ratio;
  r.ci_lo = c.ci_lo;
  r.ci_hi = c.ci_hi;
  r.probability = c.probability;
  r.n_before = static_cast<std::int64_t>(c.n_before);
  r.n_after = static_cast<std::int64_t>(c.n_after);
  return r;
}

}  // namespace

std::vector<change_record> detect_changes(database& db, std::int64_t run_id, const stats::change_options& options) {
  auto run = db.find_run(run_id);
  if (!run) throw error(errc::not_found, "run " + std::to_string(run_id) + " does not exist");
  if (run->summary.pull_request || run->summary.branch.empty()) return {};
  auto project = db.find_project(run->summary.project);
  if (!project) throw error(errc::internal, "run " + std::to_string(run_id) + " has no project");
  std::vector<change_record> found;
  for (const auto& result : run->document.results) {
    if (result.status != result_status::ok) continue;
    const config_key key = result.key();
    // The history as it stood when this run arrived, so scanning old runs again replays what would have been found.
    auto history =
        db.branch_history(project->id, run->summary.branch, run->summary.env_id, key, run_id, change_history_runs);
    if (history.empty() || history.back().run_id != run_id) continue;
    std::vector<stats::run_point> points;
    for (const auto& p : history) points.push_back({std::log(p.stat_ms), p.log_se});
    const auto scan = stats::find_change_points(points, options);
    const auto known = known_in(db, project->id, run->summary.branch, run->summary.env_id, key, history);
    for (const auto& c : stats::unknown_changes(scan.changes, known)) {
      auto record = record_of(c, history, *run, key);
      if (auto id = db.insert_change_point(project->id, record)) {
        record.id = *id;
        found.push_back(std::move(record));
      }
    }
  }
  return found;
}

boost::json::value change_json(const change_record& c) {
  return boost::json::object{{"id", std::to_string(c.id)},
                             {"project", c.project},
                             {"branch", c.branch},
                             {"env_id", c.env_id},
                             {"config", c.key.label()},
                             {"kernel", c.key.kernel},
                             {"runtime", c.key.runtime},
                             {"dtype", c.key.dtype},
                             {"batch", c.key.batch},
                             {"run_id", std::to_string(c.run_id)},
                             {"commit", c.commit},
                             {"created_at", c.created_at},
                             {"before_run_id", std::to_string(c.before_run_id)},
                             {"before_commit", c.before_commit},
                             {"detected_run_id", std::to_string(c.detected_run_id)},
                             {"detected_at", c.detected_at},
                             {"ratio", c.ratio},
                             {"ci95", boost::json::array{c.ci_lo, c.ci_hi}},
                             {"probability", c.probability},
                             {"n_before", c.n_before},
                             {"n_after", c.n_after},
                             {"direction", c.ratio > 1 ? "slower" : "faster"}};
}

}  // namespace rnx::store
