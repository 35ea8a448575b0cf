// Shards of a suite over a CI matrix: the split (`rnx bench --shard K/N`), the run group, and the merge of the
// shards' run documents into one run with the shards that did not arrive named (docs/scaling.md).
//
//   auto spec = rnx::parse_shard("2/4");                                 // throws rnx::error(usage) on bad text
//   auto split = rnx::split_shards(keys, rnx::costs_from_run(previous), 4);  // the same on every matrix job
//   auto merged = rnx::merge_shards(documents, "gate --merge");          // union, arrived, missing
#pragma once

#include "rnx/common/json.hpp"
#include "rnx/common/run_document.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rnx {

// Shards of one suite: at most this many (a matrix of more jobs than that is a configuration mistake).
inline constexpr std::int64_t max_shards = 256;

struct shard_spec {
  std::int64_t index = 1;  // K, from 1
  std::int64_t count = 1;  // N
};

// "K/N" with 1 <= K <= N <= max_shards; anything else is rnx::error(usage) naming `flag` and the form.
shard_spec parse_shard(std::string_view text, std::string_view flag = "--shard");
std::optional<shard_balance> shard_balance_from_string(std::string_view text);  // "cost" or "count"

// A run group: 1-200 characters of [A-Za-z0-9._-] (it is a URL path segment of the service); rnx::error(usage)
// naming `what` otherwise.
void validate_run_group(std::string_view group, std::string_view what);
// GitHub's run group: GITHUB_SHA-GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT, the same in every job of one workflow run and
// new on a re-run; "" when those are not all set.
std::string github_run_group(std::string_view sha, std::string_view run_id, std::string_view attempt);

struct shard_split {
  std::vector<std::int64_t> shard_of;  // per key (in the order given), its shard from 1
  shard_balance balanced_by = shard_balance::count;
};

// Deterministic balanced split: the longest configurations first, each to the least loaded shard (the lowest
// index on a tie), keys in sorted order on equal cost. With no cost known every configuration costs the same
// (a split by count); with some known, an unknown one costs the median of the known.
shard_split split_shards(const std::vector<config_key>& keys, const std::map<config_key, double>& costs,
                         std::int64_t count);

// The cost of each configuration in a run document: its sampling time (the sum of its samples, in ms).
std::map<config_key, double> costs_from_run(const run_document& run);

// The configurations of `shard` in an assignment.
std::vector<config_key> configs_of_shard(const shard_info& info, std::int64_t shard);

// The run documents of one run group (one side of it: all heads or all bases) put together.
struct shard_merge {
  run_document merged;  // every arrived shard's results in the assignment's order; no shard field
  std::string group;
  std::int64_t count = 0;
  std::vector<std::int64_t> arrived;  // shard indexes, ascending
  std::vector<std::int64_t> missing;
  std::vector<std::pair<config_key, std::int64_t>> missing_configs;  // configuration -> its shard
};

// Checks that the documents are shards of one group (the same group, N, project, commit, environment, side and
// split) and puts them together. A shard given twice is accepted when both documents hold the same results
// (a re-uploaded artifact), else rnx::error(conflict); anything else that does not fit is rnx::error(invalid)
// naming `source`, the shards and how to fix it.
shard_merge merge_shards(const std::vector<run_document>& shards, std::string_view source);

// "shards 3/4, 4/4 of run group G did not arrive: their 6 configurations were not measured" ("" when none).
std::string missing_shards_text(const shard_merge& merge);

// The run document's "shard" member (run_document.cpp).
shard_info shard_from_json(const json::reader& r);
boost::json::value to_json(const shard_info& info);
// Every result of a shard document must belong to its shard; rnx::error(invalid) naming the result otherwise.
void check_shard_results(const run_document& run, std::string_view source);

}  // namespace rnx
