// rnx::store in-process (embedded mode): migrations, tokens, baselines per env_id, verdicts, accept, durability.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/service/verdicts.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>
#include <sqlite3.h>

#include <cmath>
#include <fstream>
#include <functional>

using namespace rnx;
using rnx::test::make_run;
using rnx::test::run_spec;

namespace {

errc code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const error& e) {
    return e.code();
  }
  FAIL("expected an rnx::error");
  return errc::internal;
}

}  // namespace

TEST_CASE("a new database is migrated to the current schema version and reopening keeps it") {
  test::temp_dir dir;
  {
    store::database db(dir.file("db.sqlite"));
    CHECK(db.schema_version() == store::current_schema_version);
    db.create_project("demo");
  }
  store::database again(dir.file("db.sqlite"));
  CHECK(again.schema_version() == store::current_schema_version);
  CHECK(again.find_project("demo").has_value());
  CHECK(again.integrity_check() == "ok");
}

TEST_CASE("a database written by a newer rnx is refused with a clear message") {
  test::temp_dir dir;
  { store::database db(dir.file("db.sqlite")); }
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(dir.file("db.sqlite").c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "INSERT INTO schema_version (version) VALUES (99)", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    sqlite3_close(raw);
  }
  try {
    store::database db(dir.file("db.sqlite"));
    FAIL("opened a newer schema");
  } catch (const error& e) {
    CHECK(e.code() == errc::conflict);
    CHECK(std::string(e.what()).find("upgrade rnx") != std::string::npos);
  }
}

TEST_CASE("project names are restricted so they are safe in paths and logs") {
  test::temp_dir dir;
  store::database db(dir.file("db.sqlite"));
  std::vector<std::string> bad_names = {"",
                                        "../etc",
                                        "a/b",
                                        ".hidden",
                                        "-flag",
                                        "x'; DROP TABLE runs;--",
                                        std::string(65, 'a'),
                                        std::string("bad\xff", 4)};
  for (const auto& bad : bad_names) {
    CAPTURE(bad);
    CHECK(code_of([&] { db.create_project(bad); }) == errc::bad_input);
  }
  db.create_project("kernalin-demo_2.0");
  CHECK(code_of([&] { db.create_project("kernalin-demo_2.0"); }) == errc::conflict);
}

TEST_CASE("tokens: only the SHA-256 is stored, the secret authenticates, near misses do not") {
  test::temp_dir dir;
  store::database db(dir.file("db.sqlite"));
  db.create_project("demo");
  auto grant = db.create_token("demo", "ci");
  REQUIRE(grant.token.size() == 65);
  auto who = db.authenticate(grant.token);
  REQUIRE(who.has_value());
  CHECK(who->project == "demo");

  std::string tampered = grant.token;
  tampered.back() = tampered.back() == '0' ? '1' : '0';
  CHECK_FALSE(db.authenticate(tampered).has_value());
  CHECK_FALSE(db.authenticate("").has_value());
  CHECK_FALSE(db.authenticate(grant.token + "x").has_value());
  CHECK(code_of([&] { db.create_token("nope", "ci"); }) == errc::not_found);

  // The secret appears nowhere in the file: read every byte of it.
  std::ifstream in(dir.file("db.sqlite"), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ifstream wal(dir.file("db.sqlite-wal"), std::ios::binary);
  bytes.append((std::istreambuf_iterator<char>(wal)), std::istreambuf_iterator<char>());
  CHECK(bytes.find(grant.token.substr(17)) == std::string::npos);
}

TEST_CASE("embedded mode: push runs become baselines per env_id, PR runs are judged against them") {
  test::temp_dir dir;
  store::database db(dir.file("baselines.sqlite"));
  auto project = db.ensure_project("demo");
  gate_policy policy;

  SUBCASE("no baseline in this environment is WARN naming branch and env_id, every config new") {
    auto up = store::upload_run(db, project.id, make_run({.branch = "feature", .pull_request = 3}));
    CHECK_FALSE(up.baseline.has_value());
    auto judged = store::judge_stored_run(db, up.run.id, policy);
    CHECK(judged.verdict.verdict == overall::warn);
    CHECK(judged.verdict.reason.find("\"main\"") != std::string::npos);
    CHECK(judged.verdict.reason.find("env-a") != std::string::npos);
    CHECK_FALSE(judged.verdict.baseline.has_value());
    REQUIRE(judged.verdict.configs.size() == 4);
    for (const auto& c : judged.verdict.configs) CHECK(c.result == decision::new_config);
    // The service names its API; the embedded store the rnx accept command on its own file.
    const std::string id = std::to_string(up.run.id);
    CHECK(judged.verdict.reason ==
          "no baseline of branch \"main\" in environment env-a yet: upload a run from \"main\" "
          "measured in this environment (a push build), or make run " +
              id + " the baseline with POST /api/v1/baselines");
    auto other = store::upload_run(db, project.id, make_run({.branch = "feature", .pull_request = 4, .seed = 9}));
    auto embedded = store::judge_stored_run(db, other.run.id, policy, store::advice_route{".rnx/baselines.db"});
    const std::string other_id = std::to_string(other.run.id);
    CHECK(embedded.verdict.reason ==
          "no baseline of branch \"main\" in environment env-a yet: upload a run from \"main\" measured in this "
          "environment (a push build), or make run " +
              other_id + " the baseline with rnx accept --run-id " + other_id +
              " --store .rnx/baselines.db --reason \"...\"");
  }

  SUBCASE("with no baseline, the head column is the verdict's statistic: process medians, geometric mean") {
    run_document run = make_run({.branch = "feature", .pull_request = 3});
    run.results[0].samples_ms = {1.0, 1.1, 1.2, 4.0, 4.1, 4.2};  // a slow second process
    run.results[0].groups = {3, 3};
    auto up = store::upload_run(db, project.id, run);
    auto judged = store::judge_stored_run(db, up.run.id, policy);
    REQUIRE(judged.verdict.configs[0].head_ms.has_value());
    CHECK(*judged.verdict.configs[0].head_ms == doctest::Approx(std::sqrt(1.1 * 4.1)));  // not 2.6, the pooled median
  }

  SUBCASE("no baseline, and a kernel that errors: broken and BLOCK, with the error, not hidden behind new") {
    run_document run = make_run({.branch = "feature", .pull_request = 3});
    run.results[0].status = result_status::error;
    run.results[0].samples_ms.clear();
    run.results[0].groups.clear();
    run.results[0].message = "kernel \"k0\" failed: RuntimeError: boom";
    auto up = store::upload_run(db, project.id, run);
    auto judged = store::judge_stored_run(db, up.run.id, policy);
    CHECK(judged.verdict.verdict == overall::block);
    CHECK(judged.verdict.configs[0].result == decision::broken);
    CHECK(judged.verdict.configs[0].reason == "no baseline yet, and error: kernel \"k0\" failed: RuntimeError: boom");
    CHECK(judged.verdict.configs[1].result == decision::new_config);
  }

  SUBCASE("same code is PASS, a 20% slowdown is BLOCK, another env_id is WARN") {
    auto base = store::upload_run(db, project.id, make_run({.commit = "base", .seed = 1}));
    REQUIRE(base.baseline.has_value());
    CHECK_FALSE(base.previous_baseline.has_value());

    auto same = store::upload_run(db, project.id,
                                  make_run({.branch = "feature", .pull_request = 3, .commit = "same", .seed = 2}));
    auto pass = store::judge_stored_run(db, same.run.id, policy);
    CHECK(pass.verdict.verdict == overall::pass);
    // Asked again with the same policy and baseline: the stored verdict, not a second row.
    auto again = store::judge_stored_run(db, same.run.id, policy);
    CHECK(again.verdict_id == pass.verdict_id);
    CHECK(again.verdict.verdict == overall::pass);
    gate_policy wider = policy;
    wider.rope = 0.05;
    CHECK(store::judge_stored_run(db, same.run.id, wider).verdict_id != pass.verdict_id);
    REQUIRE(pass.verdict.baseline.has_value());
    CHECK(pass.verdict.baseline->id == std::to_string(base.run.id));
    CHECK(pass.verdict.baseline->commit == "base");
    CHECK(pass.verdict.head_run_id == std::to_string(same.run.id));

    auto slow = store::upload_run(
        db, project.id, make_run({.branch = "feature", .pull_request = 3, .commit = "slow", .scale = 1.2, .seed = 3}));
    auto block = store::judge_stored_run(db, slow.run.id, policy);
    CHECK(block.verdict.verdict == overall::block);
    for (const auto& c : block.verdict.configs) CHECK(c.result == decision::slower);

    gate_policy report_only = policy;
    report_only.report_only = true;
    CHECK(store::judge_stored_run(db, slow.run.id, report_only).verdict.verdict == overall::warn);

    auto other_env = store::upload_run(
        db, project.id, make_run({.branch = "feature", .pull_request = 3, .commit = "x", .env_id = "env-b"}));
    CHECK(store::judge_stored_run(db, other_env.run.id, policy).verdict.verdict == overall::warn);

    SUBCASE("accepting the slow PR run makes it the baseline; accepting twice is a conflict") {
      auto accepted = store::accept_run(db, project.id, slow.run.id, "alice", "intended: exact softmax", 0);
      CHECK(accepted.branch == "main");
      CHECK(accepted.source == baseline_kind::accepted);
      CHECK(accepted.accepted_by == "alice");
      CHECK(code_of([&] { store::accept_run(db, project.id, slow.run.id, "alice", "again", 0); }) == errc::conflict);
      auto next = store::upload_run(
          db, project.id,
          make_run({.branch = "feature", .pull_request = 4, .commit = "next", .scale = 1.2, .seed = 9}));
      auto judged = store::judge_stored_run(db, next.run.id, policy);
      CHECK(judged.verdict.verdict == overall::pass);
      CHECK(judged.verdict.baseline->id == std::to_string(slow.run.id));
    }

    SUBCASE("a slower push is judged against the previous baseline by the regression check") {
      auto push = store::upload_run(db, project.id, make_run({.commit = "regress", .scale = 1.25, .seed = 5}));
      REQUIRE(push.previous_baseline.has_value());
      CHECK(push.previous_baseline->run_id == base.run.id);
      auto check = store::regression_check(db, push, policy);
      REQUIRE(check.has_value());
      CHECK(check->verdict.verdict == overall::block);
      CHECK(check->baseline_run_id == base.run.id);
      // A baseline's own verdict never compares it with itself.
      auto own = store::judge_stored_run(db, push.run.id, policy);
      CHECK(own.verdict.baseline->id == std::to_string(base.run.id));
    }
  }

  SUBCASE("the identical document twice is a conflict naming the stored id; nothing half-written") {
    auto run = make_run({});
    auto first = store::upload_run(db, project.id, run);
    try {
      store::upload_run(db, project.id, run);
      FAIL("stored a duplicate");
    } catch (const error& e) {
      CHECK(e.code() == errc::conflict);
      CHECK(std::string(e.what()).find("run " + std::to_string(first.run.id)) != std::string::npos);
    }
    CHECK(db.count_runs() == 1);
    CHECK(db.list_runs(project.id, {}).size() == 1);
  }

  SUBCASE("a PR run without base_branch or a run without branch is invalid, naming the field") {
    auto bad = make_run({.base_branch = "", .pull_request = 7});
    try {
      store::upload_run(db, project.id, bad);
      FAIL("stored a PR run without base_branch");
    } catch (const error& e) {
      CHECK(e.code() == errc::invalid);
      CHECK(std::string(e.what()).find("$.base_branch") != std::string::npos);
    }
    CHECK(code_of([&] { store::upload_run(db, project.id, make_run({.branch = ""})); }) == errc::invalid);
    CHECK(db.count_runs() == 0);
  }

  SUBCASE("list and history filter by branch and env_id and keep the order of arrival") {
    store::upload_run(db, project.id, make_run({.commit = "a", .seed = 1}));
    store::upload_run(db, project.id, make_run({.commit = "b", .scale = 1.1, .seed = 2}));
    store::upload_run(db, project.id, make_run({.branch = "f", .pull_request = 1, .commit = "c"}));
    store::upload_run(db, project.id, make_run({.commit = "d", .env_id = "env-b"}));
    store::run_filter main_a;
    main_a.branch = "main";
    main_a.env_id = "env-a";
    auto runs = db.list_runs(project.id, main_a);
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].commit == "b");  // newest first
    CHECK(runs[0].baseline);
    main_a.kernel = "kernel1";
    auto series = db.history(project.id, main_a);
    REQUIRE(series.size() == 2);  // kernel1 at two batch sizes
    REQUIRE(series[0].points.size() == 2);
    CHECK(series[0].points[0].commit == "a");  // oldest first
    CHECK(*series[0].points[1].median_ms > *series[0].points[0].median_ms);
    store::run_filter limited;
    limited.limit = 1;
    CHECK(db.list_runs(project.id, limited).size() == 1);
  }
}

TEST_CASE("webhooks and their delivery log are stored per project") {
  test::temp_dir dir;
  store::database db(dir.file("db.sqlite"));
  auto p = db.create_project("demo");
  CHECK(code_of([&] { db.add_webhook(p.id, "ftp://x", store::webhook_format::slack); }) == errc::bad_input);
  auto hook = db.add_webhook(p.id, "https://hooks.slack.com/services/T/B/X", store::webhook_format::slack);
  REQUIRE(db.webhooks(p.id).size() == 1);
  db.log_delivery({0, hook.id, 7, 1, false, 500, "HTTP 500", ""});
  db.log_delivery({0, hook.id, 7, 2, true, 200, "", ""});
  auto log = db.deliveries(hook.id);
  REQUIRE(log.size() == 2);
  CHECK_FALSE(log[0].ok);
  CHECK(log[1].ok);
  CHECK(log[1].attempt == 2);
}

namespace {

// The two documents `rnx bench --pair` writes: one pairing id, a base and a head side, one environment.
std::pair<run_document, run_document> paired_runs(double head_scale, const std::string& pairing_id = "pair-1") {
  run_document base = make_run({.branch = "main", .pull_request = 4, .commit = "base", .seed = 11});
  run_document head =
      make_run({.branch = "feature", .pull_request = 4, .commit = "head", .scale = head_scale, .seed = 12});
  base.pairing = pairing_info{pairing_id, pair_side::base, "head"};
  head.pairing = pairing_info{pairing_id, pair_side::head, "base"};
  return {base, head};
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  FAIL("expected an rnx::error");
  return {};
}

}  // namespace

TEST_CASE("paired verdicts: the gate's verdict is re-derived from the two stored runs, stored and shown first") {
  test::temp_dir dir;
  store::database db(dir.file("rnx.sqlite"));
  auto project = db.ensure_project("demo");
  auto [base, head] = paired_runs(1.2);
  const auto base_id = store::upload_run(db, project.id, base).run.id;
  const auto head_id = store::upload_run(db, project.id, head).run.id;
  const gate_policy policy;
  const verdict_document decided = stats::judge_runs(base, head, policy);
  REQUIRE(decided.verdict == overall::block);

  auto judged = store::record_paired_verdict(db, project.id, head_id, base_id, policy, decided);
  CHECK(judged.verdict.verdict == overall::block);
  REQUIRE(judged.verdict.baseline);
  CHECK(judged.verdict.baseline->id == std::to_string(base_id));  // the run page finds the base samples by it
  CHECK(judged.verdict.head_run_id == std::to_string(head_id));
  // The run page and the overview read it: a paired verdict first, and listed among the newest verdicts.
  auto shown = db.verdict_of_run(head_id);
  REQUIRE(shown);
  CHECK(shown->kind == store::verdict_kind::paired);
  CHECK(shown->id == judged.verdict_id);
  auto recent = db.recent_verdicts(project.id, 10);
  REQUIRE_FALSE(recent.empty());
  CHECK(recent.front().run_id == head_id);
  // A request verdict asked for later does not hide it.
  store::judge_stored_run(db, head_id, policy);
  CHECK(db.verdict_of_run(head_id)->kind == store::verdict_kind::paired);
  // The same request again returns the stored verdict.
  CHECK(store::record_paired_verdict(db, project.id, head_id, base_id, policy, decided).verdict_id ==
        judged.verdict_id);

  // Garbage is refused, naming what is wrong.
  verdict_document flipped = decided;
  flipped.verdict = overall::pass;
  CHECK(message_of([&] {
          store::record_paired_verdict(db, project.id, head_id, base_id, policy, flipped);
        }).find("$.verdict.verdict is PASS, the stored runs give BLOCK") != std::string::npos);
  verdict_document relabeled = decided;
  relabeled.configs[0].result = decision::equivalent;
  CHECK(code_of([&] { store::record_paired_verdict(db, project.id, head_id, base_id, policy, relabeled); }) ==
        errc::invalid);
  verdict_document shifted = decided;
  *shifted.configs[1].ratio *= 0.9;
  CHECK(code_of([&] { store::record_paired_verdict(db, project.id, head_id, base_id, policy, shifted); }) ==
        errc::invalid);
  CHECK(code_of([&] { store::record_paired_verdict(db, project.id, head_id, 9999, policy, decided); }) ==
        errc::not_found);
  CHECK(message_of([&] {
          store::record_paired_verdict(db, project.id, head_id, head_id, policy, decided);
        }).find("the base run is the head run itself") != std::string::npos);

  auto other = db.ensure_project("other");
  CHECK(code_of([&] { store::record_paired_verdict(db, other.id, head_id, base_id, policy, decided); }) ==
        errc::forbidden);

  // Another environment, or the sides of two different paired runs, are no pair.
  run_document elsewhere =
      make_run({.branch = "main", .pull_request = 4, .commit = "base2", .env_id = "env-b", .seed = 13});
  elsewhere.pairing = pairing_info{"pair-1", pair_side::base, "head"};
  const auto elsewhere_id = store::upload_run(db, project.id, elsewhere).run.id;
  CHECK(message_of([&] {
          store::record_paired_verdict(db, project.id, head_id, elsewhere_id, policy, decided);
        }).find("different environments") != std::string::npos);
  auto [base2, head2] = paired_runs(1.0, "pair-2");
  base2.commit = "base-of-pair-2";
  const auto base2_id = store::upload_run(db, project.id, base2).run.id;
  CHECK(message_of([&] {
          store::record_paired_verdict(db, project.id, head_id, base2_id, policy, decided);
        }).find("are not the head and base sides of one paired run") != std::string::npos);
}

TEST_CASE("verdict kinds round trip through their names and refuse unknown ones") {
  for (auto k : {store::verdict_kind::request, store::verdict_kind::regression, store::verdict_kind::paired}) {
    CHECK(store::verdict_kind_from_string(to_string(k)) == k);
  }
  CHECK(to_string(store::verdict_kind::regression) == "regression");
  for (const char* unknown : {"", "Paired", "stored", "requests"}) {
    CAPTURE(unknown);
    CHECK_FALSE(store::verdict_kind_from_string(unknown).has_value());
  }
}
