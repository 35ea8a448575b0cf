// The verdict of a sharded run: a missing shard's configurations become `missing`, and the answer at least WARN.
#include "rnx/stats/shards.hpp"

#include "rnx/stats/verdict.hpp"

#include <algorithm>

namespace rnx::stats {

void add_missing_shards(verdict_document& verdict, const shard_merge& merge, const gate_policy& policy) {
  if (merge.missing.empty()) return;
  for (const auto& [key, shard] : merge.missing_configs) {
    auto it = std::find_if(verdict.configs.begin(), verdict.configs.end(),
                           [&](const config_verdict& c) { return c.key == key; });
    if (it == verdict.configs.end()) {
      verdict.configs.emplace_back();
      it = std::prev(verdict.configs.end());
    }
    config_verdict missing;
    missing.key = key;
    missing.result = decision::missing;
    missing.base_ms = it->base_ms;
    missing.n_base = it->n_base;
    missing.reason = "not measured: shard " + std::to_string(shard) + "/" + std::to_string(merge.count) +
                     " of run group " + merge.group + " did not arrive";
    *it = std::move(missing);
  }
  std::string why;
  verdict.verdict = overall_answer(verdict.configs, policy, why);
  verdict.reason = missing_shards_text(merge) + "; " + why;
}

}  // namespace rnx::stats
