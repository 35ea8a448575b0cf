// Unit tests of `rnx gate`'s plan: the mode read once from --mode (or the merged shards, or chosen), its notes, the
// base revision of a paired job and the flags in place of GitHub's context; the checkout is a set of refs.
#include "gate_context.hpp"
#include "gate_plan.hpp"
#include "gate_settings.hpp"

#include "rnx/common/error.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

namespace {

using namespace rnx;
using namespace rnx::gate;

commit_lookup commits(const std::set<std::string>& refs) {
  return [refs](const std::string& ref) { return refs.count(ref) > 0; };
}

commit_lookup no_lookup() {
  return [](const std::string& ref) -> bool {
    FAIL("the checkout was asked about " << ref);
    return false;
  };
}

github_context pull_request_event() {
  github_context ctx;
  ctx.event = event_kind::pull_request;
  ctx.pull_request = 7;
  ctx.branch = "feature";
  ctx.base_branch = "main";
  ctx.base_commit = "abc123";
  return ctx;
}

errc error_code_of(const std::function<void()>& step) {
  try {
    step();
  } catch (const error& e) {
    return e.code();
  }
  FAIL("no rnx::error");
  return errc::internal;
}

}  // namespace

TEST_CASE("--mode is read once; text outside the modes is a usage error") {
  gate_flags flags;
  flags.mode = "confirmed";
  const mode_choice confirmed = choose_mode(flags, pull_request_event(), std::nullopt, no_lookup());
  CHECK(confirmed.mode == gate_mode::confirmed);
  CHECK_FALSE(confirmed.paired);
  CHECK(confirmed.notes.empty());
  flags.mode = "Paired";
  CHECK(error_code_of([&] { choose_mode(flags, pull_request_event(), std::nullopt, no_lookup()); }) == errc::usage);
}

TEST_CASE("a pull request whose base commit is here is paired, and says so") {
  gate_flags flags;
  const mode_choice choice = choose_mode(flags, pull_request_event(), std::nullopt, commits({"abc123"}));
  CHECK(choice.mode == gate_mode::paired);
  CHECK(choice.paired);
  CHECK(choice.pair_ref == "abc123");
  REQUIRE(choice.notes.size() == 1);
  CHECK(choice.notes[0].find("paired mode: the base revision abc123") != std::string::npos);

  const gate_plan plan = plan_gate(flags, pull_request_event(), choice, std::nullopt, no_lookup());
  CHECK(plan.paired);
  CHECK(plan.pair_ref == "abc123");
  CHECK(plan.reported_mode() == gate_mode::paired);
}

TEST_CASE("a pull request whose base is not here is stored, and says how to pair it") {
  gate_flags flags;
  const mode_choice choice = choose_mode(flags, pull_request_event(), std::nullopt, commits({}));
  CHECK(choice.mode == gate_mode::stored);
  CHECK_FALSE(choice.paired);
  REQUIRE(choice.notes.size() == 1);
  CHECK(choice.notes[0].find("(abc123) is not in this checkout") != std::string::npos);
  CHECK(choice.notes[0].find("fetch-depth: 0") != std::string::npos);

  flags.results = "run.json";  // a prepared run has no base run beside it: no note, no lookup
  const mode_choice prepared = choose_mode(flags, pull_request_event(), std::nullopt, no_lookup());
  CHECK(prepared.mode == gate_mode::stored);
  CHECK(prepared.notes.empty());
}

TEST_CASE("a push asked to pair is stored, and the merged shards' mode needs no --mode") {
  gate_flags flags;
  flags.mode = "paired";
  github_context push;
  push.event = event_kind::push_like;
  const mode_choice choice = choose_mode(flags, push, std::nullopt, no_lookup());
  CHECK(choice.mode == gate_mode::paired);
  CHECK_FALSE(choice.paired);
  REQUIRE(choice.notes.size() == 1);
  CHECK(choice.notes[0].find("a push is stored as the new baseline") != std::string::npos);

  flags.mode.clear();
  flags.sharding.merge = {"a.json", "b.json"};
  const mode_choice merged = choose_mode(flags, pull_request_event(), gate_mode::paired, no_lookup());
  CHECK(merged.paired);
  CHECK(merged.notes.empty());
  const gate_plan plan = plan_gate(flags, pull_request_event(), merged, std::nullopt, no_lookup());
  CHECK(plan.pair_ref.empty());  // the shards' base runs name their commit
  CHECK_FALSE(manifest_required(flags));
}

TEST_CASE("a paired job's base: --pair-ref, the checkout, the event; none is a usage error") {
  gate_flags flags;
  flags.mode = "paired";
  github_context ctx = pull_request_event();
  const mode_choice choice = choose_mode(flags, ctx, std::nullopt, no_lookup());
  CHECK(plan_gate(flags, ctx, choice, std::nullopt, commits({"main"})).pair_ref == "main");
  CHECK(plan_gate(flags, ctx, choice, std::nullopt, commits({})).pair_ref == "abc123");  // the event's, unreached
  ctx.base_commit.clear();
  CHECK(plan_gate(flags, ctx, choice, std::nullopt, commits({"origin/main"})).pair_ref == "origin/main");
  flags.pair_ref = "v1.0";
  CHECK(plan_gate(flags, ctx, choice, std::nullopt, no_lookup()).pair_ref == "v1.0");
  flags.pair_ref.clear();
  CHECK(error_code_of([&] { plan_gate(flags, ctx, choice, std::nullopt, commits({})); }) == errc::usage);
  flags.base_results = "base.json";
  CHECK(plan_gate(flags, ctx, choice, std::nullopt, commits({})).pair_ref.empty());
}

TEST_CASE("the flags take the place of GitHub's context") {
  gate_flags flags;
  flags.commit = "def456";
  flags.pull_request = "12";
  const github_context ctx = with_flags(github_context{}, flags);
  CHECK(ctx.commit == "def456");
  CHECK(ctx.pull_request == 12);
  CHECK(is_pull_request_run(ctx));
  CHECK_FALSE(is_push_run(ctx));
  flags.pull_request = "12x";
  CHECK(error_code_of([&] { with_flags(github_context{}, flags); }) == errc::usage);
}
