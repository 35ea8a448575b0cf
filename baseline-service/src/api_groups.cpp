// The API's answers about sharded runs' groups: hold a shard, show a group, judge a group once.
#include "api_groups.hpp"

#include "router.hpp"

#include "rnx/common/shard.hpp"
#include "rnx/service/run_groups.hpp"

namespace rnx::service {

namespace bj = boost::json;

response shard_upload_answer(store::database& db, metrics& m, std::int64_t project_id, const run_document& shard,
                             std::chrono::seconds timeout, const request& req) {
  const store::group_state state = store::receive_shard(db, project_id, shard, timeout);
  if (state.formed() && state.record.arrived.size() == static_cast<std::size_t>(state.record.count)) {
    m.count_run_stored(project_id);
  }
  return json_answer(202, bj::object{{"group", store::to_json(state)}}, req);
}

response group_answer(store::database& db, std::int64_t project_id, std::string_view group,
                      std::chrono::seconds timeout, const request& req) {
  validate_run_group(group, "path: run group");
  return json_answer(200, bj::object{{"group", store::to_json(store::run_group_state(db, project_id, group, timeout))}},
                     req);
}

response group_verdict_answer(store::database& db, metrics& m, std::int64_t project_id, std::string_view group,
                              const gate_policy& policy, std::chrono::seconds timeout, const request& req) {
  validate_run_group(group, "path: run group");
  const store::group_verdict judged = store::judge_run_group(db, project_id, group, policy, timeout);
  if (!judged.judged) return json_answer(202, bj::object{{"group", store::to_json(judged.state)}}, req);
  m.count_verdict(project_id, judged.judged->verdict.verdict, to_string(store::verdict_kind::request));
  return json_answer(
      200, bj::object{{"group", store::to_json(judged.state)}, {"verdict", to_json(judged.judged->verdict)}}, req);
}

}  // namespace rnx::service
