// Sharded runs at the gate: merging the shards' run documents (`rnx gate --merge`), a shard job's upload, and
// the matrix's final job asking for its run group's verdict (docs/scaling.md).
#pragma once

#include "gate_backend.hpp"
#include "gate_settings.hpp"

#include "rnx/common/shard.hpp"
#include "rnx/common/verdict_document.hpp"

#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace rnx::gate {

// rnx gate's flags for sharded runs: a shard job (--shard), the final job from files (--merge) or from the
// store (--group-verdict).
struct shard_flags {
  std::vector<std::string> merge;  // the shards' run documents, judged together once
  std::string shard;               // K/N: this job measures shard K of N (rnx bench --shard) and reports nothing
  std::string run_group;           // the shards' run group (default: GITHUB_SHA-GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT)
  bool group_verdict = false;      // the final job: the store's verdict over the run group
  double group_wait_s = 3600;      // how long the final job waits for the group
};
void add_shard_flags(CLI::App& cmd, shard_flags& flags);
// The three kinds of job exclude each other and --results; rnx::error(usage) naming the clash.
void check_shard_flags(const shard_flags& flags, bool results_given);
// --run-group, else GitHub's run group; rnx::error(usage) when neither names one.
std::string resolve_run_group(const shard_flags& flags, std::string_view what);

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

// The end of a shard job: the head run (stamped, written to OUT/run.json) goes to its run group in the store when
// the comparison is stored and a service (or an explicit --store the shards share) is configured; otherwise the
// documents in OUT are for an artifact. No verdict, comment or status; the store being down is a warning only
// (the final job names the shard's configurations as not measured). Writes the step's outputs.
void hand_in_shard(const run_document& head, bool paired, bool has_base, const backend_flags& backend,
                   const manifest* m, const std::string& out_dir, const std::string& output_path);

}  // namespace rnx::gate
