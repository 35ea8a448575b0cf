// Sharded runs in the store: hold shards by run group, form the group's run once, judge it with the missing named.
#include "rnx/service/run_groups.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/shard.hpp"
#include "rnx/stats/shards.hpp"

#include <algorithm>
#include <mutex>

namespace rnx::store {

namespace {

// One group is formed once: two last shards arriving together must not both store the run.
std::mutex forming;

group_state state_of(run_group_record record, const group_timeout& timeout) {
  group_state out;
  for (std::int64_t k = 1; k <= record.count; ++k) {
    if (!std::binary_search(record.arrived.begin(), record.arrived.end(), k)) out.missing.push_back(k);
  }
  out.seconds_left = std::max<std::int64_t>(0, record.first_received + timeout.after.count() - timeout.now());
  out.record = std::move(record);
  return out;
}

// Stores the merged run of the group's arrived shards and marks the group formed; returns the run id.
std::int64_t form_group(database& db, std::int64_t project_id, std::string_view group, const shard_merge& merge) {
  std::lock_guard lock(forming);
  if (auto record = db.find_run_group(project_id, group); record && record->run_id) return *record->run_id;
  std::int64_t run_id = 0;
  if (auto stored = db.find_run_by_document(project_id, merge.merged)) {
    run_id = *stored;  // formed before a crash could mark it: the run is there, the mark is not
  } else {
    run_id = upload_run(db, project_id, merge.merged).run.id;
  }
  db.mark_group_formed(project_id, group, run_id);
  return run_id;
}

}  // namespace

std::int64_t group_timeout::now() const {
  if (clock) return clock();
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

group_state receive_shard(database& db, std::int64_t project_id, const run_document& shard,
                          const group_timeout& timeout) {
  if (!shard.shard) throw error(errc::internal, "receive_shard: the run document is not a shard");
  // The checks upload_run makes of a run, before the shard is held: a shard that could never be filed is refused now.
  if (shard.branch.empty()) {
    throw error(errc::invalid, "run document: $.branch: the store needs the branch the run was measured on");
  }
  if (shard.pull_request && shard.base_branch.empty()) {
    throw error(errc::invalid, "run document: $.base_branch: a pull request run needs the branch it merges into");
  }
  group_state state = state_of(db.store_shard(project_id, shard), timeout);
  if (state.complete() && !state.formed()) {
    const shard_merge merge = merge_shards(db.shard_documents(project_id, shard.shard->group), "run group");
    form_group(db, project_id, shard.shard->group, merge);
    state = run_group_state(db, project_id, shard.shard->group, timeout);
  }
  return state;
}

group_state run_group_state(database& db, std::int64_t project_id, std::string_view group,
                            const group_timeout& timeout) {
  auto record = db.find_run_group(project_id, group);
  if (!record) {
    throw error(errc::not_found, "run group " + std::string(group) +
                                     " has no shard in this project (upload the "
                                     "shards' runs first; the group is COMMIT-RUN_ID-ATTEMPT in GitHub Actions)");
  }
  return state_of(std::move(*record), timeout);
}

group_verdict judge_run_group(database& db, std::int64_t project_id, std::string_view group, const gate_policy& policy,
                              const group_timeout& timeout, const advice_route& route) {
  group_verdict out;
  out.state = run_group_state(db, project_id, group, timeout);
  if (!out.state.complete() && !out.state.formed() && out.state.seconds_left > 0) return out;
  const shard_merge merge = merge_shards(db.shard_documents(project_id, group), "run group");
  const std::int64_t run_id = form_group(db, project_id, group, merge);
  out.state = run_group_state(db, project_id, group, timeout);
  judged_run judged = judge_stored_run(db, run_id, policy, route);
  // Idempotent: a repeated request gets the stored verdict back with the missing already named.
  const std::string before = json::serialize(to_json(judged.verdict));
  stats::add_missing_shards(judged.verdict, merge, policy);
  if (json::serialize(to_json(judged.verdict)) != before) {
    // Stored, so the run's pages and a repeated request show the shards that were not measured.
    judged.verdict_id = db.store_verdict(run_id, judged.baseline_run_id, store::verdict_kind::request, judged.verdict);
  }
  out.judged = std::move(judged);
  return out;
}

boost::json::value to_json(const group_state& state) {
  namespace bj = boost::json;
  bj::array arrived(state.record.arrived.begin(), state.record.arrived.end());
  bj::array missing(state.missing.begin(), state.missing.end());
  return bj::object{{"group", state.record.group},
                    {"count", state.record.count},
                    {"arrived", std::move(arrived)},
                    {"missing", std::move(missing)},
                    {"seconds_left", state.seconds_left},
                    {"first_received_at", state.record.first_received_at},
                    {"run_id", state.record.run_id ? bj::value(std::to_string(*state.record.run_id)) : bj::value()},
                    {"formed_at", state.record.formed_at}};
}

group_state group_state_from_json(const boost::json::value& v, std::string_view source) {
  json::reader r(v, std::string(source));
  group_state out;
  out.record.group = r.string("group");
  out.record.count = r.integer("count");
  auto arrived = r.at("arrived");
  for (std::size_t i = 0; i < arrived.array().size(); ++i) out.record.arrived.push_back(arrived.at(i).integer());
  auto missing = r.at("missing");
  for (std::size_t i = 0; i < missing.array().size(); ++i) out.missing.push_back(missing.at(i).integer());
  out.seconds_left = r.integer("seconds_left");
  out.record.first_received_at = r.string_or("first_received_at", "");
  if (auto id = r.maybe("run_id")) {
    const std::string text = id->string();
    std::int64_t n = 0;
    for (char c : text) {
      if (c < '0' || c > '9') id->fail("a run id");
      n = n * 10 + (c - '0');
    }
    out.record.run_id = n;
  }
  out.record.formed_at = r.string_or("formed_at", "");
  return out;
}

}  // namespace rnx::store
