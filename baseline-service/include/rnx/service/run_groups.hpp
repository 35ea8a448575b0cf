// Sharded runs in the store: the shards of a run group are held until all N have arrived (or the group's timeout
// has passed since its first shard), then formed into one run and judged once. Shared by rnx-server and the
// embedded store (`rnx gate --store`); docs/scaling.md describes the behaviour.
//
//   auto state = rnx::store::receive_shard(db, project.id, shard_run, std::chrono::minutes(30));
//   auto judged = rnx::store::judge_run_group(db, project.id, state.record.group, policy, std::chrono::minutes(30));
//   if (!judged.judged) { /* pending: judged.state.missing are still to come, seconds_left until due */ }
#pragma once

#include "rnx/service/verdicts.hpp"

#include <boost/json/value.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace rnx::store {

// How long a group waits for its missing shards after its first arrived, and the clock that is read on (seconds
// since the epoch; the system clock unless a test gives its own). A duration converts to one on the system clock.
struct group_timeout {
  std::chrono::seconds after{0};
  std::function<std::int64_t()> clock;  // empty: the system clock

  // Not explicit: every caller but a test passes the duration alone.
  group_timeout(std::chrono::seconds after_first_shard, std::function<std::int64_t()> now_clock = {})
      : after(after_first_shard), clock(std::move(now_clock)) {}
  std::int64_t now() const;
};

struct group_state {
  run_group_record record;
  std::vector<std::int64_t> missing;  // shards not arrived
  std::int64_t seconds_left = 0;      // until the group is due (formed without the missing ones); 0 when due
  bool complete() const { return missing.empty(); }
  bool formed() const { return record.run_id.has_value(); }
};

// Checks the shard as upload_run checks a run (a branch to file it under, ...), holds it in its group, and forms
// the group's run when this was its last missing shard (a push group's run becomes the branch's baseline, as an
// unsharded push run does). Conflicts: see database::store_shard.
group_state receive_shard(database& db, std::int64_t project_id, const run_document& shard,
                          const group_timeout& timeout);

// not_found for a group that no shard has named.
group_state run_group_state(database& db, std::int64_t project_id, std::string_view group,
                            const group_timeout& timeout);

struct group_verdict {
  group_state state;
  std::optional<judged_run> judged;  // unset while the group is incomplete and not yet due
};

// A complete or due group: forms its run from the arrived shards (once), judges it against the newest baseline
// (judge_stored_run) and names every configuration of a missing shard (decision missing, the answer WARN at
// least, never PASS). An incomplete group before its timeout: nothing is formed, `judged` is unset.
group_verdict judge_run_group(database& db, std::int64_t project_id, std::string_view group, const gate_policy& policy,
                              const group_timeout& timeout, const advice_route& route = {});

// {"group", "count", "arrived", "missing", "seconds_left", "first_received_at", "run_id" (null while open),
// "formed_at"}: the API's answer (docs/api/openapi.yaml, RunGroup), read back by the gate.
boost::json::value to_json(const group_state& state);
group_state group_state_from_json(const boost::json::value& v, std::string_view source);

}  // namespace rnx::store
