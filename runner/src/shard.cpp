// `rnx bench --shard K/N`: the suite a sharded run splits, and this shard's share of it.
#include "bench_plan.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/shard.hpp"
#include "rnx/runner/bench.hpp"

namespace rnx::runner {

std::vector<config_key> planned_configs(const bench_options& options) {
  if (options.manifests.empty()) throw error(errc::usage, "no manifest given (pass --config rnx.toml)");
  std::vector<detail::side_state> sides(1);
  sides[0].m = load_manifest(options.manifests[0]);
  sides[0].manifest_path = options.manifests[0];
  bench_options all = options;
  all.manifests.resize(1);
  all.only.reset();
  std::vector<config_key> out;
  for (const auto& p : detail::plan(sides, all)) out.push_back(p.result.key());
  return out;
}

shard_info plan_shard(bench_options& options, std::int64_t index, std::int64_t count, const std::string& group,
                      const std::map<config_key, double>& costs) {
  const std::vector<config_key> suite = planned_configs(options);
  if (static_cast<std::int64_t>(suite.size()) < count) {
    throw error(errc::usage, "--shard " + std::to_string(index) + "/" + std::to_string(count) + ": the suite has " +
                                 std::to_string(suite.size()) + " configuration" + (suite.size() == 1 ? "" : "s") +
                                 ", so a shard would measure nothing: use at most " + std::to_string(suite.size()) +
                                 " shards");
  }
  const shard_split split = split_shards(suite, costs, count);
  shard_info info;
  info.index = index;
  info.count = count;
  info.group = group;
  info.balanced_by = split.balanced_by;
  std::set<config_key> mine;
  for (std::size_t i = 0; i < suite.size(); ++i) {
    info.assignment.emplace_back(suite[i], split.shard_of[i]);
    if (split.shard_of[i] == index) mine.insert(suite[i]);
  }
  options.only = std::move(mine);
  return info;
}

}  // namespace rnx::runner
