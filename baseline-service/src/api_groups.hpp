// The API's answers about sharded runs' groups (docs/scaling.md): a shard's upload, a group, a group's verdict.
// api.cpp authenticates and authorizes; these store and answer.
#pragma once

#include "rnx/service/api.hpp"
#include "rnx/service/metrics.hpp"
#include "rnx/service/store.hpp"

#include <chrono>
#include <cstdint>
#include <string_view>

namespace rnx::service {

// POST /api/v1/runs with a shard's document: 202 with the group (the run, once formed, is in the group's run_id).
response shard_upload_answer(store::database& db, metrics& m, std::int64_t project_id, const run_document& shard,
                             std::chrono::seconds timeout, const request& req);
// GET /api/v1/projects/{project}/groups/{group}: 200 with the group; 404 for a group no shard named.
response group_answer(store::database& db, std::int64_t project_id, std::string_view group,
                      std::chrono::seconds timeout, const request& req);
// POST /api/v1/projects/{project}/groups/{group}/verdict: 200 {group, verdict} once complete or due, else 202.
response group_verdict_answer(store::database& db, metrics& m, std::int64_t project_id, std::string_view group,
                              const gate_policy& policy, std::chrono::seconds timeout, const request& req);

}  // namespace rnx::service
