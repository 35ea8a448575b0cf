// Shards: parsing K/N and run groups, the balanced split, the shard member of a run document, and the merge.
#include "rnx/common/error.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/shard.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>

using namespace rnx;

namespace {

std::vector<config_key> suite(int n) {
  std::vector<config_key> keys;
  for (int i = 0; i < n; ++i) keys.push_back({"k" + std::to_string(i % 5), "eager", "float32", 1 + i / 5});
  return keys;
}

// A shard's document of a 6-configuration suite split by count over 3 shards.
run_document shard_doc(std::int64_t index, const std::string& group = "abc-12-1") {
  const auto keys = suite(6);
  const auto split = split_shards(keys, {}, 3);
  run_document run;
  run.project = "demo";
  run.commit = "abc";
  run.branch = "topic";
  run.base_branch = "main";
  run.pull_request = 3;
  run.env.device = "cpu";
  run.env.env_id = compute_env_id(run.env);
  shard_info info;
  info.index = index;
  info.count = 3;
  info.group = group;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    info.assignment.emplace_back(keys[i], split.shard_of[i]);
    if (split.shard_of[i] != index) continue;
    run_result r;
    r.kernel = keys[i].kernel;
    r.runtime = keys[i].runtime;
    r.dtype = keys[i].dtype;
    r.batch = keys[i].batch;
    r.device = "cpu";
    r.samples_ms = {1.0, 1.1, 1.2};
    run.results.push_back(r);
  }
  run.shard = info;
  return run;
}

}  // namespace

TEST_CASE("parse_shard takes K/N and refuses the rest, naming the form") {
  CHECK(parse_shard("2/4").index == 2);
  CHECK(parse_shard("2/4").count == 4);
  for (const char* bad : {"", "2", "0/4", "5/4", "a/4", "2/0", "2/4x", "1/257", "-1/4"}) {
    CAPTURE(bad);
    try {
      parse_shard(bad);
      FAIL("accepted");
    } catch (const error& e) {
      CHECK(e.code() == errc::usage);
      CHECK(std::string(e.what()).find("K/N") != std::string::npos);
    }
  }
  CHECK_NOTHROW(validate_run_group("abc123-456-1", "--run-group"));
  CHECK_THROWS_AS(validate_run_group("a/b", "--run-group"), error);
  CHECK_THROWS_AS(validate_run_group("", "--run-group"), error);
  CHECK(github_run_group("abc", "12", "1") == "abc-12-1");
  CHECK(github_run_group("abc", "", "1").empty());
}

TEST_CASE("split by count: every shard gets its share, the same split whatever the input order") {
  auto keys = suite(10);
  const auto split = split_shards(keys, {}, 4);
  CHECK(split.balanced_by == shard_balance::count);
  std::map<std::int64_t, int> sizes;
  for (auto s : split.shard_of) ++sizes[s];
  CHECK(sizes.size() == 4);
  for (const auto& [s, n] : sizes) CHECK((n == 2 || n == 3));
  auto reversed = keys;
  std::reverse(reversed.begin(), reversed.end());
  const auto again = split_shards(reversed, {}, 4);
  for (std::size_t i = 0; i < keys.size(); ++i) CHECK(again.shard_of[keys.size() - 1 - i] == split.shard_of[i]);
}

TEST_CASE("split by cost: the longest first, each to the least loaded shard") {
  const auto keys = suite(5);
  std::map<config_key, double> costs{{keys[0], 9}, {keys[1], 5}, {keys[2], 4}, {keys[3], 3}, {keys[4], 1}};
  const auto split = split_shards(keys, costs, 2);
  CHECK(split.balanced_by == shard_balance::cost);
  std::map<std::int64_t, double> load;
  for (std::size_t i = 0; i < keys.size(); ++i) load[split.shard_of[i]] += costs[keys[i]];
  // 9 -> 1; 5 -> 2; 4 -> 2 (9 vs 5); 3 -> 1 (9 vs 9: the lower index); 1 -> 2: loads 12 and 10.
  CHECK(load[1] == 12);
  CHECK(load[2] == 10);
  // An unknown configuration costs the median of the known ones.
  costs.erase(keys[4]);
  CHECK(split_shards(keys, costs, 2).balanced_by == shard_balance::cost);
  run_document prev;
  prev.results.resize(1);
  prev.results[0].kernel = "k0";
  prev.results[0].samples_ms = {1.5, 2.5};
  CHECK(costs_from_run(prev).begin()->second == doctest::Approx(4.0));
}

TEST_CASE("the shard member round-trips, and a result outside its shard is refused") {
  const run_document doc = shard_doc(2);
  const run_document back = run_from_json(to_json(doc), "shard.json");
  REQUIRE(back.shard);
  CHECK(back.shard->index == 2);
  CHECK(back.shard->group == "abc-12-1");
  CHECK(back.shard->assignment == doc.shard->assignment);
  auto wrong = to_json(doc);
  wrong.as_object()["shard"].as_object()["index"] = 1;
  try {
    run_from_json(wrong, "shard.json");
    FAIL("accepted");
  } catch (const error& e) {
    CHECK(e.code() == errc::invalid);
    CHECK(std::string(e.what()).find("is not in shard 1/3") != std::string::npos);
  }
}

TEST_CASE("merge: the arrived shards' results, the missing shard and its configurations named") {
  const shard_merge m = merge_shards({shard_doc(3), shard_doc(1)}, "test");
  CHECK(m.arrived == std::vector<std::int64_t>{1, 3});
  CHECK(m.missing == std::vector<std::int64_t>{2});
  CHECK(m.merged.results.size() == 4);
  CHECK(!m.merged.shard);
  CHECK(m.missing_configs.size() == 2);
  for (const auto& [key, shard] : m.missing_configs) CHECK(shard == 2);
  CHECK(missing_shards_text(m) == "shard 2/3 of run group abc-12-1 did not arrive: 2 configurations were not measured");
  CHECK(merge_shards({shard_doc(1), shard_doc(1)}, "test").arrived.size() == 1);  // a re-uploaded artifact

  auto changed = shard_doc(1);
  changed.results[0].samples_ms = {9.0};
  CHECK_THROWS_AS(merge_shards({shard_doc(1), changed}, "test"), error);
  try {
    merge_shards({shard_doc(1), shard_doc(2, "other-1-1")}, "test");
    FAIL("accepted");
  } catch (const error& e) {
    CHECK(std::string(e.what()).find("different run groups") != std::string::npos);
  }
  auto elsewhere = shard_doc(2);
  elsewhere.env.device = "gpu";
  elsewhere.env.env_id = compute_env_id(elsewhere.env);
  CHECK_THROWS_WITH_AS(merge_shards({shard_doc(1), elsewhere}, "test"), doctest::Contains("different environments"),
                       error);
}
