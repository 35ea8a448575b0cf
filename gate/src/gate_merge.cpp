// Sharded runs at the gate: merging shard documents from artifacts, and waiting for a run group's verdict.
#include "gate_merge.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/run_document.hpp"

#include "gate_report.hpp"

#include <CLI/CLI.hpp>

#include <chrono>
#include <iostream>
#include <optional>
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
      throw error(errc::invalid, file +
                                     " is not a shard's run document (it has no \"shard\"): --merge takes the "
                                     "documents of rnx bench --shard K/N");
    }
    (doc.pairing && doc.pairing->side == pair_side::base ? bases : heads).push_back(std::move(doc));
  }
  if (heads.empty()) {
    throw error(errc::usage,
                "--merge: no head run among the files (only --base-out documents); pass the shards' "
                "--out documents too");
  }
  merged_shards out;
  out.head = merge_shards(heads, "--merge");
  if (!bases.empty()) {
    out.base = merge_shards(bases, "--merge (base runs)");
    if (out.base->arrived != out.head.arrived || out.base->group != out.head.group) {
      throw error(errc::invalid, "--merge: the paired shards' head runs (" +
                                     shard_list(out.head.arrived, out.head.count) + ") and base runs (" +
                                     shard_list(out.base->arrived, out.base->count) +
                                     ") are not the same shards of one run group: pass both documents of each "
                                     "shard (--out and --base-out), or only the heads to compare with the stored "
                                     "baseline");
    }
  } else if (heads.front().pairing) {
    throw error(errc::invalid,
                "--merge: the shards are paired runs but no base run (--base-out) is among the files: "
                "pass them too");
  }
  return out;
}

std::string describe_group(const store::group_state& state) {
  std::string text = "run group " + state.record.group + ": " + std::to_string(state.record.arrived.size()) + " of " +
                     std::to_string(state.record.count) + " shards arrived (" +
                     shard_list(state.record.arrived, state.record.count) + ")";
  if (state.formed()) {
    text += "; formed as run " + std::to_string(*state.record.run_id);
  } else {
    text += "; waiting for " + shard_list(state.missing, state.record.count) + ", at most " +
            std::to_string(state.seconds_left) + " s more";
  }
  return text;
}

namespace {

// The group's outcome, or nullopt while the store knows no shard of it yet: the final job of a matrix may ask before
// the first shard's upload has landed. `not_yet` then holds the store's words.
std::optional<group_outcome> ask_group(baseline_backend& backend, const std::string& project, const std::string& group,
                                       const gate_policy& policy, std::string& not_yet) {
  try {
    return backend.judge_group(project, group, policy);
  } catch (const error& e) {
    if (e.code() != errc::not_found) throw;
    not_yet = e.what();
    return std::nullopt;
  }
}

}  // namespace

verdict_document await_group_verdict(baseline_backend& backend, const std::string& project, const std::string& group,
                                     const gate_policy& policy, double wait_s) {
  using clock = std::chrono::steady_clock;
  const auto until = clock::now() + std::chrono::milliseconds(static_cast<long long>(wait_s * 1000));
  while (true) {
    std::string not_yet;
    std::optional<group_outcome> outcome = ask_group(backend, project, group, policy, not_yet);
    if (outcome && outcome->verdict) {
      std::cout << "rnx gate: " << describe_group(outcome->state) << "\n";
      return std::move(*outcome->verdict);
    }
    const std::string state = outcome ? describe_group(outcome->state) : not_yet;
    const auto left = std::chrono::duration<double>(until - clock::now()).count();
    if (left <= 0) {
      verdict_document v;
      v.verdict = overall::warn;
      v.policy = policy;
      v.reason = "no verdict: " + state + "; the gate stopped waiting after " +
                 std::to_string(static_cast<long long>(wait_s)) + " s (--group-wait)";
      return v;
    }
    std::cout << "rnx gate: " << (outcome ? state : "no shard of run group " + group + " has arrived yet") << "\n"
              << std::flush;
    // Ask again when the group is due, or sooner: a shard may complete it first.
    const double due = outcome ? std::max(0.5, static_cast<double>(outcome->state.seconds_left)) : 1.0;
    const double pause = std::min({left, 5.0, due});
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<long long>(pause * 1000)));
  }
}

void add_shard_flags(CLI::App& cmd, shard_flags& flags) {
  cmd.add_option("--shard", flags.shard,
                 "K/N: a matrix job measuring shard K of N of the suite; it reports nothing "
                 "(its run goes to its run group in the service, or is an artifact)");
  cmd.add_option("--run-group", flags.run_group,
                 "The shards' run group (default: $GITHUB_SHA-$GITHUB_RUN_ID-"
                 "$GITHUB_RUN_ATTEMPT)");
  cmd.add_option("--merge", flags.merge,
                 "The final job of a matrix: the shards' run documents (and, paired, their "
                 "base runs), judged together once; a missing shard's configurations are named");
  cmd.add_flag("--group-verdict", flags.group_verdict,
               "The final job of a matrix whose shards uploaded to the "
               "store: wait for the run group's verdict and report it once");
  cmd.add_option("--group-wait", flags.group_wait_s, "With --group-verdict: seconds to wait for the group at most")
      ->check(CLI::Range(0.0, 86400.0))
      ->capture_default_str();
}

void check_shard_flags(const shard_flags& flags, bool results_given) {
  const int kinds = int{!flags.merge.empty()} + int{!flags.shard.empty()} + int{flags.group_verdict};
  if (kinds > 1) {
    throw error(errc::usage,
                "--shard (a matrix job), --merge (the final job, from files) and --group-verdict (the "
                "final job, from the store) are three kinds of job: use one");
  }
  if (results_given && (!flags.merge.empty() || flags.group_verdict)) {
    throw error(errc::usage,
                "--results is one prepared run; --merge and --group-verdict judge a sharded run's "
                "shards: drop --results");
  }
  if (!flags.run_group.empty() && flags.shard.empty() && !flags.group_verdict) {
    throw error(errc::usage, "--run-group names the group of --shard or --group-verdict; add one of them");
  }
  if (!flags.shard.empty()) (void)parse_shard(flags.shard);
  if (!flags.run_group.empty()) validate_run_group(flags.run_group, "--run-group");
}

std::string resolve_run_group(const shard_flags& flags, std::string_view what) {
  std::string group = flags.run_group;
  if (group.empty()) {
    group =
        github_run_group(env_or_empty("GITHUB_SHA"), env_or_empty("GITHUB_RUN_ID"), env_or_empty("GITHUB_RUN_ATTEMPT"));
  }
  if (group.empty()) {
    throw error(errc::usage, std::string(what) +
                                 " needs the run group: pass --run-group NAME (in GitHub Actions it "
                                 "is GITHUB_SHA-GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT)");
  }
  validate_run_group(group, "--run-group");
  return group;
}

void hand_in_shard(const run_document& head, bool paired, bool has_base, const backend_flags& backend,
                   const manifest* m, const std::string& out_dir, const std::string& output_path) {
  const shard_info& s = *head.shard;
  const std::string name = std::to_string(s.index) + "/" + std::to_string(s.count);
  const bool embedded = resolve_service_url(backend, m).url.empty();
  std::string state;
  if (!paired && (!embedded || !backend.store.empty())) {
    std::unique_ptr<baseline_backend> store;
    try {
      store = open_backend(backend, m).backend;
      state = describe_group(store->upload_shard(head));
      std::cout << "rnx gate: shard " << name << " stored in the " << store->describe() << "; " << state << "\n";
    } catch (const error& e) {
      if (e.code() != errc::unavailable && !(embedded && e.code() == errc::internal)) throw;
      state = "not stored: " + std::string(e.what());
      std::cout << "::warning title=rnx::" << escape_command_data("shard " + name + " " + state) << "\n";
    }
  } else {
    std::cout << "rnx gate: shard " << name << " of run group " << s.group << ": its run documents are in " << out_dir
              << " (run.json" << (has_base ? ", base-run.json" : "")
              << "); upload them as an artifact, and the matrix's final job judges every shard with rnx gate --merge\n";
  }
  if (!output_path.empty())
    write_outputs(output_path, {{"shard", name}, {"run-group", s.group}, {"group-state", state}});
}

}  // namespace rnx::gate
