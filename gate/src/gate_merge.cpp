// Sharded runs at the gate: merging shard documents from artifacts, and waiting for a run group's verdict.
#include "gate_merge.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/run_document.hpp"

#include <chrono>
#include <iostream>
#include <set>
#include <thread>

namespace rnx::gate {

namespace {

std::string shard_list(const std::vector<std::int64_t>& shards, std::int64_t count) {
  std::string out;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    out += (i ? ", " : "") + std::to_string(shards[i]) + "/" + std::to_string(count);
  }
  return out;
}

}  // namespace

merged_shards read_shard_files(const std::vector<std::string>& files) {
  std::vector<run_document> heads;
  std::vector<run_document> bases;
  for (const auto& file : files) {
    run_document doc = read_run_file(file);
    if (!doc.shard) {
      throw error(errc::invalid, file + " is not a shard's run document (it has no \"shard\"): --merge takes the "
                                        "documents of rnx bench --shard K/N");
    }
    (doc.pairing && doc.pairing->side == "base" ? bases : heads).push_back(std::move(doc));
  }
  if (heads.empty()) {
    throw error(errc::usage, "--merge: no head run among the files (only --base-out documents); pass the shards' "
                             "--out documents too");
  }
  merged_shards out;
  out.head = merge_shards(heads, "--merge");
  if (!bases.empty()) {
    out.base = merge_shards(bases, "--merge (base runs)");
    if (out.base->arrived != out.head.arrived || out.base->group != out.head.group) {
      throw error(errc::invalid, "--merge: the paired shards' head runs (" + shard_list(out.head.arrived, out.head.count) +
                                     ") and base runs (" + shard_list(out.base->arrived, out.base->count) +
                                     ") are not the same shards of one run group: pass both documents of each "
                                     "shard (--out and --base-out), or only the heads to compare with the stored "
                                     "baseline");
    }
  } else if (heads.front().pairing) {
    throw error(errc::invalid, "--merge: the shards are paired runs but no base run (--base-out) is among the files: "
                               "pass them too");
  }
  return out;
}

std::string describe_group(const store::group_state& state) {
  std::string text = "run group " + state.record.group + ": " + std::to_string(state.record.arrived.size()) +
                     " of " + std::to_string(state.record.count) + " shards arrived (" +
                     shard_list(state.record.arrived, state.record.count) + ")";
  if (state.formed()) {
    text += "; formed as run " + std::to_string(*state.record.run_id);
  } else {
    text += "; waiting for " + shard_list(state.missing, state.record.count) + ", at most " +
            std::to_string(state.seconds_left) + " s more";
  }
  return text;
}

verdict_document await_group_verdict(baseline_backend& backend, const std::string& project, const std::string& group,
                                     const gate_policy& policy, double wait_s) {
  using clock = std::chrono::steady_clock;
  const auto until = clock::now() + std::chrono::milliseconds(static_cast<long long>(wait_s * 1000));
  while (true) {
    group_outcome outcome = backend.judge_group(project, group, policy);
    if (outcome.verdict) {
      std::cout << "rnx gate: " << describe_group(outcome.state) << "\n";
      return std::move(*outcome.verdict);
    }
    const auto left = std::chrono::duration<double>(until - clock::now()).count();
    if (left <= 0) {
      verdict_document v;
      v.verdict = overall::warn;
      v.policy = policy;
      v.reason = "no verdict: " + describe_group(outcome.state) + "; the gate stopped waiting after " +
                 std::to_string(static_cast<long long>(wait_s)) + " s (--group-wait)";
      return v;
    }
    std::cout << "rnx gate: " << describe_group(outcome.state) << "\n" << std::flush;
    // Ask again when the group is due, or sooner: a shard may complete it first.
    const double pause = std::min({left, 5.0, std::max(0.5, static_cast<double>(outcome.state.seconds_left))});
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long long>(pause * 1000)));
  }
}

}  // namespace rnx::gate
