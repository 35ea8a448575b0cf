// Sharded runs at the gate: merging the shards' run documents (`rnx gate --merge`), a shard job's upload, and
// the matrix's final job asking for its run group's verdict (docs/scaling.md).
#pragma once

#include "gate_backend.hpp"

#include "rnx/common/shard.hpp"
#include "rnx/common/verdict_document.hpp"

#include <optional>
#include <string>
#include <vector>

namespace rnx::gate {

// The documents of one run group, each side merged: heads, and bases when the shards were paired runs.
struct merged_shards {
  shard_merge head;
  std::optional<shard_merge> base;
};

// Reads every file (rnx bench --shard K/N documents; --base-out ones are told apart by their pairing side) and
// merges each side. rnx::error(invalid) when a paired shard's head or base is missing beside the other, or the
// documents are not one group (merge_shards).
merged_shards read_shard_files(const std::vector<std::string>& files);

// One line for a shard job: what the store holds of its group now ("shard 2/4 of group G stored: 2 of 4 arrived
// (1/4, 2/4); the matrix's final job reports the verdict").
std::string describe_group(const store::group_state& state);

// The final job of a matrix with a service: asks for the group's verdict until it is formed (all shards arrived,
// or the store's timeout passed since the first), sleeping between asks, for at most `wait_s` seconds. A group
// still pending after that is a WARN verdict naming the shards still missing, never a PASS.
verdict_document await_group_verdict(baseline_backend& backend, const std::string& project, const std::string& group,
                                     const gate_policy& policy, double wait_s);

}  // namespace rnx::gate
