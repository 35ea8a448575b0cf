// Webhooks after a regressing baseline push (generic, Slack, Teams; retries; delivery log) and the HTTP client.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/process.hpp"
#include "rnx/http/client.hpp"
#include "rnx/service/metrics.hpp"
#include "rnx/service/notifier.hpp"
#include "rnx/service/verdicts.hpp"

#include <doctest/doctest.h>

using namespace rnx;
using rnx::test::run_json;

namespace {

http::response upload(const test::server_process& server, const std::string& token, const test::run_spec& spec) {
  return http::request("POST", server.url("/api/v1/runs"),
                       {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}}, run_json(spec));
}

// A port nothing listens on: bind one, note it, close it.
unsigned short closed_port() {
  namespace asio = boost::asio;
  asio::io_context ioc;
  asio::ip::tcp::acceptor a(ioc, {asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

}  // namespace

TEST_CASE("webhooks: a slower baseline push notifies every format, retries failures, never fails the upload") {
  test::temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string token = test::make_token(db_path, "demo");
  test::recording_server generic({500, 200});  // first attempt fails, the retry succeeds
  test::recording_server slack;
  std::string dead_url = "http://127.0.0.1:" + std::to_string(closed_port()) + "/teams";
  std::int64_t generic_id = 0;
  std::int64_t dead_id = 0;
  {
    store::database db(db_path);
    auto p = db.find_project("demo");
    generic_id = db.add_webhook(p->id, generic.url("/generic"), store::webhook_format::generic).id;
    db.add_webhook(p->id, slack.url("/slack"), store::webhook_format::slack);
    dead_id = db.add_webhook(p->id, dead_url, store::webhook_format::teams).id;
  }
  test::server_process server(db_path,
                              {"--webhook-attempts", "3", "--webhook-backoff", "0.05", "--webhook-timeout", "2"});

  REQUIRE(upload(server, token, {.commit = "first", .seed = 1}).status == 201);
  // Same speed again: a regression check runs, finds nothing, sends nothing.
  REQUIRE(upload(server, token, {.commit = "same", .seed = 2}).status == 201);
  // 25% slower push to main: regression, webhooks fire; the upload itself is a plain 201.
  auto slow = upload(server, token, {.commit = "slower", .scale = 1.25, .seed = 3});
  REQUIRE(slow.status == 201);
  const std::string slow_id(json::parse(slow.body, "upload").at("id").as_string());

  auto got = generic.wait_for(2);
  REQUIRE(got.size() == 2);
  CHECK(got[0].body == got[1].body);  // the retry sends the same event
  CHECK(got[1].content_type == "application/json");
  auto body = json::parse(got[1].body, "generic webhook");
  CHECK(body.at("event").as_string() == "regression");
  CHECK(body.at("commit").as_string() == "slower");
  CHECK(body.at("regressions").as_array().size() == 4);
  CHECK(body.at("verdict").at("verdict").as_string() == "BLOCK");
  CHECK(body.at("verdict").at("baseline").at("commit").as_string() == "same");

  auto slack_got = slack.wait_for(1);
  REQUIRE(slack_got.size() == 1);
  auto sbody = json::parse(slack_got[0].body, "slack webhook");
  CHECK(std::string(sbody.at("text").as_string()).find("regression") != std::string::npos);
  CHECK(sbody.at("blocks").as_array()[0].at("text").at("type").as_string() == "mrkdwn");

  // The unreachable Teams hook was tried three times and logged: every delivery and retry is done once the server
  // logs the slower run's check as done.
  server.wait_for_log("regression check for run " + slow_id + " done");
  const auto dead_log = store::database(db_path).deliveries(dead_id);
  REQUIRE(dead_log.size() == 3);
  for (const auto& d : dead_log) {
    CHECK_FALSE(d.ok);
    CHECK(d.http_status == 0);
    CHECK(d.error.find(dead_url) != std::string::npos);
  }
  const auto generic_log = store::database(db_path).deliveries(generic_id);
  REQUIRE(generic_log.size() == 2);
  CHECK_FALSE(generic_log[0].ok);
  CHECK(generic_log[0].http_status == 500);
  CHECK(generic_log[1].ok);
  CHECK(generic_log[1].attempt == 2);

  // The project is private: its figures are counted for its own token only.
  auto m = http::request("GET", server.url("/metrics"), {{"Authorization", "Bearer " + token}});
  CHECK(m.body.find("rnx_verdicts_total{outcome=\"BLOCK\",kind=\"regression\"} 1") != std::string::npos);
  CHECK(m.body.find("rnx_verdicts_total{outcome=\"PASS\",kind=\"regression\"} 1") != std::string::npos);
}

TEST_CASE("webhook payloads: Teams is a MessageCard listing the slower configurations") {
  verdict_document v;
  v.verdict = overall::block;
  v.baseline = baseline_ref{"1", "abc", "2026-12-01T00:00:00Z"};
  config_verdict c;
  c.key = {"attention", "eager", "float32", 8};
  c.result = decision::slower;
  c.ratio = 1.3;
  v.configs.push_back(c);
  c.key.batch = 1;
  c.result = decision::equivalent;
  v.configs.push_back(c);
  store::run_summary run;
  run.id = 2;
  run.branch = "main";
  run.commit = "def";
  run.env_id = "e1";
  auto card = json::parse(service::webhook_payload(store::webhook_format::teams, "demo", run, v), "teams");
  CHECK(card.at("@type").as_string() == "MessageCard");
  auto facts = card.at("sections").as_array()[0].at("facts").as_array();
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].at("name").as_string() == "attention/eager/float32/b8");
}

TEST_CASE("http client: request and response round trip, errors name the URL") {
  test::recording_server peer({201});
  auto r = http::request("POST", peer.url("/path?x=1&y=%20z"), {{"X-Custom", "v"}}, "hello body");
  CHECK(r.status == 201);
  CHECK(r.body == "recorded hello body");
  CHECK(r.header("x-echo-target") == "/path?x=1&y=%20z");
  auto seen = peer.requests();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].method == "POST");
  CHECK(seen[0].host == "127.0.0.1:" + std::to_string(peer.port()));

  try {
    http::request("GET", "http://127.0.0.1:" + std::to_string(closed_port()) + "/x");
    FAIL("connected to a closed port");
  } catch (const error& e) {
    CHECK(e.code() == errc::unavailable);
    CHECK(std::string(e.what()).find("/x") != std::string::npos);
  }
  for (std::string bad : {"not a url", "ftp://host/x", "http:///nohost"}) {
    CAPTURE(bad);
    try {
      http::request("GET", bad);
      FAIL("accepted a bad URL");
    } catch (const error& e) {
      CHECK(e.code() == errc::usage);
    }
  }
}

TEST_CASE("http client: a server slower than the timeout is an unavailable error, not a hang") {
  test::recording_server slow({}, test::recording_server::no_answer);  // only the client's timeout ends the wait
  try {
    http::request("GET", slow.url("/slow"), {}, {}, std::chrono::milliseconds(300));
    FAIL("no timeout");
  } catch (const error& e) {
    CHECK(e.code() == errc::unavailable);
    CHECK(std::string(e.what()).find("timed out") != std::string::npos);
  }
}

TEST_CASE("TLS: rnx-server over HTTPS; the client verifies the peer unless told which CA to trust") {
  test::temp_dir dir;
  std::string cert = dir.file("cert.pem");
  std::string key = dir.file("key.pem");
  REQUIRE_MESSAGE(test::make_test_certificate(cert, key, true),
                  "the openssl command is needed to make a test certificate");
  std::string db = dir.file("rnx.sqlite");
  test::server_process server(db, {"--tls-cert", cert, "--tls-key", key});
  REQUIRE(server.url().rfind("https://", 0) == 0);

  try {
    http::request("GET", server.url("/healthz"));
    FAIL("trusted a self-signed certificate by default");
  } catch (const error& e) {
    CHECK(e.code() == errc::unavailable);
  }
  http::request_options trust;
  trust.ca_file = cert;
  auto ok = http::request("GET", server.url("/healthz"), {}, {}, trust);
  CHECK(ok.status == 200);
  CHECK(ok.body.find("\"ok\"") != std::string::npos);

  // The certificate names 127.0.0.1 and localhost only; another name fails host verification.
  http::request_options wrong_name = trust;
  try {
    http::request("GET", "https://127.0.0.2:" + std::to_string(server.port()) + "/healthz", {}, {}, wrong_name);
    FAIL("accepted a certificate for another host");
  } catch (const error& e) {
    CHECK(e.code() == errc::unavailable);
  }
}

TEST_CASE("notifier: wait_idle returns once every queued check has been judged and delivered") {
  test::temp_dir dir;
  test::recording_server hook;
  store::database db(dir.file("rnx.sqlite"));
  db.ensure_project("demo");
  const auto project = db.find_project("demo");
  REQUIRE(project);
  const std::int64_t hook_id = db.add_webhook(project->id, hook.url("/hook"), store::webhook_format::generic).id;
  service::metrics m;
  service::notifier_options options;
  options.attempts = 1;
  service::notifier notify(db, m, options);
  store::upload_run(db, project->id, test::make_run({.commit = "first", .seed = 1}));
  auto slower = store::upload_run(db, project->id, test::make_run({.commit = "slower", .scale = 1.25, .seed = 3}));
  REQUIRE(slower.previous_baseline);
  notify.enqueue(slower);
  // No polling: once the notifier is idle, the regression has been posted and its delivery logged.
  notify.wait_idle();
  REQUIRE(hook.requests().size() == 1);
  CHECK(json::parse(hook.requests()[0].body, "webhook").at("commit").as_string() == "slower");
  const auto log = db.deliveries(hook_id);
  REQUIRE(log.size() == 1);
  CHECK(log[0].ok);
  // Idle with nothing queued returns at once.
  notify.wait_idle();
}

TEST_CASE("notifier: a regression check lost (dropped from a full queue, or failed) is logged and counted") {
  test::temp_dir dir;
  store::database db(dir.file("rnx.sqlite"));
  db.ensure_project("demo");
  const auto project = db.find_project("demo");
  REQUIRE(project);
  store::upload_run(db, project->id, test::make_run({.commit = "first", .seed = 1}));
  auto slower = store::upload_run(db, project->id, test::make_run({.commit = "slower", .scale = 1.25, .seed = 3}));
  REQUIRE(slower.previous_baseline);
  service::metrics m;
  const service::metrics::view anyone{[](std::int64_t) { return true; }, 0};
  {
    service::notifier_options full;
    full.max_queue = 0;
    service::notifier notify(db, m, full);
    notify.enqueue(slower);
    notify.wait_idle();
  }
  {
    // The runs' table gone under the server (another program, a disk gone bad): the check throws.
    const auto dropped = rnx::run_process(
        {"python3", "-c",
         "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('PRAGMA foreign_keys=OFF'); "
         "c.execute('DROP TABLE runs'); c.commit()",
         dir.file("rnx.sqlite")});
    REQUIRE_MESSAGE(dropped.exit_code == 0, dropped.err);
    service::notifier notify(db, m, service::notifier_options{});
    notify.enqueue(slower);
    notify.wait_idle();
  }
  const std::string text = m.render(anyone);
  CHECK(text.find("rnx_regression_checks_lost_total{reason=\"dropped\"} 1\n") != std::string::npos);
  CHECK(text.find("rnx_regression_checks_lost_total{reason=\"failed\"} 1\n") != std::string::npos);
}
