// Change points over the store: found after a branch's push runs and stored once, read back from old databases,
// sent to the webhooks once (real rnx-server, local webhook server), listed by the API and by `rnx changes`.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"
#include "rnx/service/changes.hpp"
#include "rnx/service/verdicts.hpp"

#include <doctest/doctest.h>

#include <sqlite3.h>

#include <set>
#include <thread>

using namespace rnx;

namespace {

// Push run `i` of main: flat for runs 0 .. step - 1, `factor` slower from run `step` on (every configuration).
test::run_spec push_run(int i, int step, double factor) {
  return {.commit = "c" + std::to_string(i), .scale = i >= step ? factor : 1.0, .seed = static_cast<unsigned>(100 + i)};
}

http::response upload(const test::server_process& server, const std::string& token, const test::run_spec& spec) {
  return http::request("POST", server.url("/api/v1/runs"),
                       {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}, run_json(spec));
}

std::vector<test::recording_server::received> change_messages(test::recording_server& hook) {
  std::vector<test::recording_server::received> out;
  for (const auto& r : hook.requests()) {
    if (r.body.find("change_point") != std::string::npos || r.body.find("became slower") != std::string::npos) {
      out.push_back(r);
    }
  }
  return out;
}

// Waits until the server's background worker has finished its check of run `run_id` (the change scan runs before
// the regression check, so it is done too): the server logs one line per finished check.
void wait_for_regression_check(test::server_process& server, std::int64_t run_id) {
  server.wait_for_log("regression check for run " + std::to_string(run_id) + " done");
}

}  // namespace

TEST_CASE("store: a 6% step in main's history is one change point per configuration, stored once") {
  test::temp_dir dir;
  store::database db(dir.file("rnx.sqlite"));
  auto project = db.ensure_project("demo");
  std::vector<std::int64_t> ids;
  std::size_t announced = 0;
  for (int i = 0; i < 22; ++i) {
    auto upload = store::upload_run(db, project.id, test::make_run(push_run(i, 12, 1.06)));
    ids.push_back(upload.run.id);
    announced += store::detect_changes(db, upload.run.id).size();
    // A pull request's run is not part of main's history and finds nothing.
    test::run_spec pr = push_run(i, 0, 1.5);
    pr.commit = "pr" + std::to_string(i);
    pr.branch = "feature";
    pr.pull_request = 7;
    CHECK(store::detect_changes(db, store::upload_run(db, project.id, test::make_run(pr)).run.id).empty());
  }
  CHECK(announced == 4);
  auto changes = db.change_points(project.id, {});
  REQUIRE(changes.size() == 4);
  for (const auto& c : changes) {
    CHECK(c.branch == "main");
    CHECK(c.env_id == "env-a");
    CHECK(c.commit == "c12");
    CHECK(c.before_commit == "c11");
    CHECK(c.run_id == ids[12]);
    CHECK(c.ratio == doctest::Approx(1.06).epsilon(0.01));
    CHECK(c.ci_lo < 1.06);
    CHECK(c.ci_hi > 1.06);
    CHECK(c.probability > 0.99);
  }
  store::change_filter one;
  one.config = config_key{"kernel1", "eager", "float32", 4};
  CHECK(db.change_points(project.id, one).size() == 1);
  store::change_filter other_branch;
  other_branch.branch = "feature";
  CHECK(db.change_points(project.id, other_branch).empty());
}

TEST_CASE("schema 4 -> 5: results stored before are read through their median and interval") {
  test::temp_dir dir;
  std::string path = dir.file("rnx.sqlite");
  {
    store::database db(path);
    auto project = db.ensure_project("demo");
    for (int i = 0; i < 20; ++i) store::upload_run(db, project.id, test::make_run(push_run(i, 10, 1.08)));
  }
  {
    // Back to the version 4 layout: no run statistic, no change_points table (nor what versions 6 and 8 added),
    // versions 5 to 8 not recorded.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw,
                         (std::string(test::undo_schema_8) +
                          "DROP TABLE shard_uploads; DROP TABLE run_groups; "
                          "DROP TABLE change_points; ALTER TABLE results DROP COLUMN stat_ms; "
                          "ALTER TABLE results DROP COLUMN stat_log_se; DELETE FROM schema_version WHERE version >= 5")
                             .c_str(),
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  store::database db(path);
  CHECK(db.schema_version() == store::current_schema_version);
  auto project = db.find_project("demo");
  REQUIRE(project);
  // Replayed oldest first, as the runs arrived; a second replay finds nothing new.
  auto runs = db.list_runs(project->id, {.limit = 100});
  std::size_t found = 0;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) found += store::detect_changes(db, it->id).size();
  CHECK(found == 4);
  for (auto it = runs.rbegin(); it != runs.rend(); ++it) CHECK(store::detect_changes(db, it->id).empty());
  REQUIRE(db.change_points(project->id, {}).size() == 4);
  for (const auto& c : db.change_points(project->id, {})) {
    CHECK(c.commit == "c10");
    CHECK(c.ratio == doctest::Approx(1.08).epsilon(0.01));
  }
}

TEST_CASE("rnx-server: each change point reaches the webhooks once, however many runs follow") {
  test::temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = test::make_token(db_path, "demo");
  test::recording_server generic;
  test::recording_server slack;
  test::recording_server teams;
  {
    store::database db(db_path);
    auto p = db.find_project("demo");
    db.add_webhook(p->id, generic.url("/generic"), store::webhook_format::generic);
    db.add_webhook(p->id, slack.url("/slack"), store::webhook_format::slack);
    db.add_webhook(p->id, teams.url("/teams"), store::webhook_format::teams);
  }
  test::server_process server(db_path, {"--webhook-attempts", "1", "--webhook-timeout", "2"});
  std::vector<std::int64_t> ids;
  auto push = [&](int i) {
    auto res = upload(server, token, push_run(i, 12, 1.06));
    REQUIRE(res.status == 201);
    ids.push_back(std::stoll(std::string(json::parse(res.body, "upload").at("id").as_string())));
  };
  for (int i = 0; i < 16; ++i) push(i);
  wait_for_regression_check(server, ids.back());
  auto first = change_messages(generic);
  CHECK(first.size() == 4);
  for (int i = 16; i < 24; ++i) push(i);
  wait_for_regression_check(server, ids.back());

  // Still one message per change point and hook, after eight more runs on the new level.
  auto generic_got = change_messages(generic);
  REQUIRE(generic_got.size() == 4);
  CHECK(change_messages(slack).size() == 4);
  CHECK(change_messages(teams).size() == 4);
  std::set<std::string> configs;
  for (const auto& r : generic_got) {
    auto body = json::parse(r.body, "generic change point");
    CHECK(body.at("event").as_string() == "change_point");
    CHECK(body.at("commit").as_string() == "c12");
    CHECK(body.at("before_commit").as_string() == "c11");
    CHECK(body.at("direction").as_string() == "slower");
    CHECK(body.at("ratio").to_number<double>() == doctest::Approx(1.06).epsilon(0.01));
    configs.insert(std::string(body.at("config").as_string()));
  }
  CHECK(configs.size() == 4);
  auto slack_body = json::parse(change_messages(slack).front().body, "slack change point");
  CHECK(std::string(slack_body.at("text").as_string()).find("became slower on demo/main at c12") != std::string::npos);
  auto teams_body = json::parse(change_messages(teams).front().body, "teams change point");
  CHECK(teams_body.at("@type").as_string() == "MessageCard");
}

TEST_CASE("GET /api/v1/projects/{p}/changes: stored change points, filtered; bad queries 400, other projects 403") {
  test::temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = test::make_token(db_path, "demo");
  std::string other_token = test::make_token(db_path, "other");
  std::vector<std::int64_t> ids;
  {
    store::database db(db_path);
    auto project = db.find_project("demo");
    for (int i = 0; i < 16; ++i) {
      ids.push_back(store::upload_run(db, project->id, test::make_run(push_run(i, 12, 1.06))).run.id);
      store::detect_changes(db, ids.back());
    }
  }
  test::server_process server(db_path);
  const http::header_list auth = {{"Authorization", "Bearer " + token}};
  auto listed = http::request("GET", server.url("/api/v1/projects/demo/changes"), auth);
  REQUIRE(listed.status == 200);
  auto list = json::parse(listed.body, "changes").at("changes").as_array();
  REQUIRE(list.size() == 4);
  CHECK(list[0].at("run_id").as_string() == std::to_string(ids[12]));
  CHECK(list[0].at("ci95").as_array().size() == 2);
  auto one =
      http::request("GET", server.url("/api/v1/projects/demo/changes?kernel=kernel0&branch=main&limit=10"), auth);
  REQUIRE(one.status == 200);
  CHECK(json::parse(one.body, "changes").at("changes").as_array().size() == 2);
  auto none = http::request("GET", server.url("/api/v1/projects/demo/changes?branch=feature"), auth);
  CHECK(json::parse(none.body, "changes").at("changes").as_array().empty());
  CHECK(http::request("GET", server.url("/api/v1/projects/demo/changes?limit=0"), auth).status == 400);
  CHECK(http::request("GET", server.url("/api/v1/projects/demo/changes?colour=red"), auth).status == 400);
  CHECK(http::request("GET", server.url("/api/v1/projects/demo/changes")).status == 401);
  CHECK(http::request("GET", server.url("/api/v1/projects/demo/changes"), {{"Authorization", "Bearer " + other_token}})
            .status == 403);
}

#ifdef RNX_CLI_BIN
TEST_CASE("rnx changes: the embedded store's change points as a table and as JSON; bad input exits 2") {
  test::temp_dir dir;
  std::string path = dir.file("store.sqlite");
  {
    store::database db(path);
    auto project = db.ensure_project("demo");
    for (int i = 0; i < 20; ++i) store::upload_run(db, project.id, test::make_run(push_run(i, 10, 1.08)));
  }
  // Runs stored without the scan (as an older rnx left them): --scan replays the history run by run.
  auto empty = test::run_command({RNX_CLI_BIN, "changes", "--store", path, "--project", "demo"});
  CHECK(empty.exit_code == 0);
  CHECK(empty.out == "no change points\n");
  auto scanned = test::run_command({RNX_CLI_BIN, "changes", "--store", path, "--project", "demo", "--scan"});
  REQUIRE(scanned.exit_code == 0);
  CHECK(scanned.err.find("4 new change point(s) stored") != std::string::npos);
  CHECK(scanned.out.find("kernel0/eager/float32/b1  main  slower x1.08") != std::string::npos);
  CHECK(scanned.out.find("from commit c10") != std::string::npos);
  auto as_json = test::run_command(
      {RNX_CLI_BIN, "changes", "--store", path, "--project", "demo", "--format", "json", "--kernel", "kernel1"});
  REQUIRE(as_json.exit_code == 0);
  auto doc = json::parse(as_json.out, "rnx changes --format json");
  REQUIRE(doc.at("changes").as_array().size() == 2);
  CHECK(doc.at("changes").as_array()[0].at("commit").as_string() == "c10");
  auto again = test::run_command({RNX_CLI_BIN, "changes", "--store", path, "--project", "demo", "--scan"});
  CHECK(again.err.find("0 new change point(s) stored") != std::string::npos);

  auto no_store = test::run_command({RNX_CLI_BIN, "changes", "--store", dir.file("missing.sqlite"), "--project", "x"});
  CHECK(no_store.exit_code == 2);
  CHECK(no_store.err.find("no store at") != std::string::npos);
  auto bad_format = test::run_command({RNX_CLI_BIN, "changes", "--store", path, "--project", "demo", "--format", "x"});
  CHECK(bad_format.exit_code == 2);
  auto unknown = test::run_command({RNX_CLI_BIN, "changes", "--store", path, "--project", "nope"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("project \"nope\"") != std::string::npos);
}
#endif
