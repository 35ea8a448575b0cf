// Sharded runs in the store (run_groups.hpp): shards held by run group, the group formed once, its verdict over
// every shard with a missing one's configurations named; the same verdicts as the unsharded run. The store's stamps
// and the timeout are read on the test's own clock.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/shard.hpp"
#include "rnx/service/run_groups.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>

using namespace rnx;
using rnx::test::make_run;

namespace {

// The unsharded PR run of 8 configurations and its shard K of 4 (split by count).
run_document shard_of(const run_document& whole, std::int64_t k, const std::string& group = "c0ffee-9-1") {
  std::vector<config_key> keys;
  for (const auto& r : whole.results) keys.push_back(r.key());
  const shard_split split = split_shards(keys, {}, 4);
  run_document doc = whole;
  doc.results.clear();
  shard_info info;
  info.index = k;
  info.count = 4;
  info.group = group;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    info.assignment.emplace_back(keys[i], split.shard_of[i]);
    if (split.shard_of[i] == k) doc.results.push_back(whole.results[i]);
  }
  doc.shard = info;
  return doc;
}

}  // namespace

TEST_CASE("run groups: held until complete or due, formed once, judged with the missing shard named") {
  test::temp_dir dir;
  // The store's clock and the groups' timeout read the same injected time: 2026-12-06T07:00:00Z.
  std::chrono::system_clock::time_point clock_now{std::chrono::seconds(1796540400)};
  const auto unix_now = [&clock_now] {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_now.time_since_epoch()).count();
  };
  store::database db(dir.file("groups.sqlite"), {.clock = [&clock_now] { return clock_now; }});
  auto project = db.ensure_project("demo");
  CHECK(project.created_at == "2026-12-06T07:00:00Z");
  gate_policy policy;
  store::upload_run(db, project.id, make_run({.kernels = 4, .batches = 2}));  // main's baseline
  const run_document whole = make_run({.branch = "topic", .pull_request = 5, .kernels = 4, .batches = 2, .seed = 2});
  const auto unsharded = store::judge_stored_run(db, store::upload_run(db, project.id, whole).run.id, policy);
  run_document other_whole = whole;
  other_whole.commit = "beef";  // another run of the same code, so its shards are new documents

  SUBCASE("all four shards: formed by the last, the same verdict as the unsharded run") {
    const store::group_timeout timeout(std::chrono::seconds(3600), unix_now);
    for (std::int64_t k : {2, 4, 1}) {
      auto state = store::receive_shard(db, project.id, shard_of(other_whole, k), timeout);
      CHECK_FALSE(state.formed());
      CHECK_FALSE(store::judge_run_group(db, project.id, "c0ffee-9-1", policy, timeout).judged);
    }
    CHECK(db.list_runs(project.id, {}).size() == 2);  // nothing stored as a run while shards are missing
    auto state = store::receive_shard(db, project.id, shard_of(other_whole, 3), timeout);
    CHECK(state.formed());
    CHECK(state.complete());
    auto judged = store::judge_run_group(db, project.id, "c0ffee-9-1", policy, timeout);
    REQUIRE(judged.judged);
    CHECK(judged.judged->verdict.verdict == unsharded.verdict.verdict);
    REQUIRE(judged.judged->verdict.configs.size() == unsharded.verdict.configs.size());
    for (const auto& u : unsharded.verdict.configs) {
      auto it = std::find_if(judged.judged->verdict.configs.begin(), judged.judged->verdict.configs.end(),
                             [&](const config_verdict& c) { return c.key == u.key; });
      REQUIRE(it != judged.judged->verdict.configs.end());
      CHECK(it->result == u.result);
      CHECK(it->ratio == u.ratio);
    }
    // A retried upload of a held shard is a no-op; another document for it is a conflict.
    CHECK_NOTHROW(store::receive_shard(db, project.id, shard_of(other_whole, 3), timeout));
    auto changed = shard_of(other_whole, 3);
    changed.results[0].samples_ms[0] *= 2;
    CHECK_THROWS_AS(store::receive_shard(db, project.id, changed, timeout), error);
  }

  SUBCASE("one shard missing: due after the timeout, WARN naming its configurations, a late one refused") {
    const store::group_timeout timeout(std::chrono::seconds(1), unix_now);
    const auto first = store::receive_shard(db, project.id, shard_of(other_whole, 1), timeout);
    CHECK(first.record.first_received == unix_now());  // the store wrote down the arrival on its own clock
    for (std::int64_t k : {2, 3}) store::receive_shard(db, project.id, shard_of(other_whole, k), timeout);
    CHECK(store::run_group_state(db, project.id, "c0ffee-9-1", timeout).seconds_left == 1);
    CHECK_FALSE(store::judge_run_group(db, project.id, "c0ffee-9-1", policy, timeout).judged);
    clock_now += std::chrono::seconds(1);  // the timeout has passed
    CHECK(store::run_group_state(db, project.id, "c0ffee-9-1", timeout).seconds_left == 0);
    auto judged = store::judge_run_group(db, project.id, "c0ffee-9-1", policy, timeout);
    REQUIRE(judged.judged);
    const verdict_document& v = judged.judged->verdict;
    CHECK(v.verdict == overall::warn);
    CHECK(v.reason.rfind("shard 4/4 of run group c0ffee-9-1 did not arrive: 2 configurations were not measured", 0) ==
          0);
    int missing = 0;
    for (const auto& c : v.configs) {
      if (c.result != decision::missing) continue;
      ++missing;
      CHECK(c.reason == "not measured: shard 4/4 of run group c0ffee-9-1 did not arrive");
    }
    CHECK(missing == 2);
    // Asked again: the same stored verdict, no second run.
    auto again = store::judge_run_group(db, project.id, "c0ffee-9-1", policy, timeout);
    CHECK(again.judged->verdict_id == judged.judged->verdict_id);
    CHECK(db.list_runs(project.id, {}).size() == 3);
    try {
      store::receive_shard(db, project.id, shard_of(other_whole, 4), timeout);
      FAIL("accepted");
    } catch (const error& e) {
      CHECK(e.code() == errc::conflict);
      CHECK(std::string(e.what()).find("was formed as run") != std::string::npos);
    }
  }

  SUBCASE("a shard naming another N than its group is a conflict; an unknown group is not found") {
    const store::group_timeout timeout(std::chrono::seconds(60), unix_now);
    store::receive_shard(db, project.id, shard_of(other_whole, 1), timeout);
    auto odd = shard_of(other_whole, 2);
    odd.shard->count = 5;
    CHECK_THROWS_AS(store::receive_shard(db, project.id, odd, timeout), error);
    CHECK_THROWS_AS(store::run_group_state(db, project.id, "no-such-group", timeout), error);
  }
}
