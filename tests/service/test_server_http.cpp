// Integration: the real rnx-server on a loopback port with a temp database, spoken to over HTTP.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/verdict_document.hpp"
#include "rnx/stats/verdict.hpp"

#include <doctest/doctest.h>

#include <sqlite3.h>

using namespace rnx;
using rnx::test::run_json;
using rnx::test::run_spec;

namespace {

struct client {
  std::string base;
  std::string token;

  http::response call(const std::string& method, const std::string& path, const std::string& body = "",
                      const std::optional<std::string>& bearer = std::nullopt) const {
    http::header_list headers{{"Content-Type", "application/json"}};
    std::string t = bearer.value_or(token);
    if (!t.empty()) headers.emplace_back("Authorization", "Bearer " + t);
    return http::request(method, base + path, headers, body, std::chrono::seconds(20));
  }
  boost::json::value json_of(const http::response& r) const { return json::parse(r.body, "response"); }
  std::string upload(const run_spec& spec) const {
    auto r = call("POST", "/api/v1/runs", run_json(spec));
    REQUIRE_MESSAGE(r.status == 201, r.body);
    return std::string(json_of(r).at("id").as_string());
  }
  verdict_document verdict(const std::string& id, const std::string& body = "") const {
    auto r = call("POST", "/api/v1/runs/" + id + "/verdict", body);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return verdict_from_json(json_of(r), "verdict response");
  }
};

// The error body is {"error": {"code", "message"}} and the message is there to help.
void check_error(const http::response& r, int status, const std::string& code, const std::string& mentions = "") {
  CAPTURE(r.body);
  CHECK(r.status == status);
  CHECK(r.header("Content-Type") == "application/json");
  auto v = json::parse(r.body, "error response");
  REQUIRE(v.is_object());
  auto& e = v.at("error");
  CHECK(e.at("code").as_string() == code);
  CHECK(e.at("message").as_string().size() > 10);
  if (!mentions.empty()) CHECK(std::string(e.at("message").as_string()).find(mentions) != std::string::npos);
}

}  // namespace

TEST_CASE("server: upload, verdicts PASS / BLOCK / WARN, accept flow, listing and history") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo");
  test::server_process server(db);
  client c{server.url(), token};

  auto health = c.call("GET", "/healthz", "", std::string());
  CHECK(health.status == 200);

  // No baseline yet: WARN naming the branch and the environment.
  std::string early = c.upload({.branch = "feature", .pull_request = 1, .commit = "early"});
  auto warn = c.verdict(early);
  CHECK(warn.verdict == overall::warn);
  CHECK(warn.reason.find(test::env_id_of("env-a")) != std::string::npos);
  for (const auto& cfg : warn.configs) CHECK(cfg.result == decision::new_config);

  // A push to main is the baseline; the same code on a PR passes.
  auto up = c.call("POST", "/api/v1/runs", run_json({.commit = "base", .seed = 1}));
  REQUIRE(up.status == 201);
  CHECK(up.header("Location").rfind("/api/v1/runs/", 0) == 0);
  CHECK(c.json_of(up).at("baseline").as_bool());
  std::string base_id(c.json_of(up).at("id").as_string());

  std::string same = c.upload({.branch = "feature", .pull_request = 1, .commit = "same", .seed = 2});
  auto pass = c.verdict(same);
  CHECK(pass.verdict == overall::pass);
  REQUIRE(pass.baseline.has_value());
  CHECK(pass.baseline->id == base_id);

  // 20% slower: BLOCK, every configuration slower.
  std::string slow = c.upload({.branch = "feature", .pull_request = 1, .commit = "slow", .scale = 1.2, .seed = 3});
  auto block = c.verdict(slow);
  CHECK(block.verdict == overall::block);
  for (const auto& cfg : block.configs) CHECK(cfg.result == decision::slower);
  // The request may carry a policy: report_only turns BLOCK into WARN.
  CHECK(c.verdict(slow, R"({"policy": {"report_only": true}})").verdict == overall::warn);

  // Same code in another environment has no baseline there.
  std::string other = c.upload({.branch = "feature", .pull_request = 1, .commit = "x", .env_id = "env-b"});
  CHECK(c.verdict(other).verdict == overall::warn);

  // Accept the slow run as main's baseline (intended slowdown); the next slow PR passes.
  auto accepted = c.call("POST", "/api/v1/baselines",
                         R"({"run_id": ")" + slow + R"(", "accepted_by": "alice", "reason": "exact softmax"})");
  REQUIRE_MESSAGE(accepted.status == 201, accepted.body);
  CHECK(c.json_of(accepted).at("branch").as_string() == "main");
  // The name given and the token that accepted: the name alone is free text.
  CHECK(c.json_of(accepted).at("accepted_by").as_string() == "alice (token \"test-admin\", admin scope)");
  check_error(
      c.call("POST", "/api/v1/baselines", R"({"run_id": )" + slow + R"(, "accepted_by": "alice", "reason": "again"})"),
      409, "conflict", "already the newest baseline");
  std::string next = c.upload({.branch = "feature", .pull_request = 2, .commit = "next", .scale = 1.2, .seed = 4});
  auto after = c.verdict(next);
  CHECK(after.verdict == overall::pass);
  CHECK(after.baseline->id == slow);

  // GET the run back, list runs with filters, history per configuration.
  auto got = c.call("GET", "/api/v1/runs/" + base_id);
  REQUIRE(got.status == 200);
  CHECK(c.json_of(got).at("document").at("commit").as_string() == "base");
  auto list = c.call("GET", "/api/v1/projects/demo/runs?branch=main&env_id=" + test::env_id_of("env-a") + "&limit=10");
  REQUIRE(list.status == 200);
  auto runs = c.json_of(list).at("runs").as_array();
  REQUIRE(runs.size() == 1);
  CHECK(runs[0].at("id").as_string() == base_id);
  auto hist = c.call("GET", "/api/v1/projects/demo/history?branch=feature&kernel=kernel0");
  REQUIRE(hist.status == 200);
  auto series = c.json_of(hist).at("series").as_array();
  CHECK(series.size() == 4);  // kernel0 x 2 batches x 2 environments
  CHECK(c.json_of(hist).at("series").as_array()[0].at("points").as_array().size() >= 1);

  // The metrics count what happened: to the project's own token, since the project is private (without a token,
  // /metrics counts nothing of it; test_metrics.cpp).
  auto m = c.call("GET", "/metrics");
  REQUIRE(m.status == 200);
  CHECK(c.call("GET", "/metrics", "", std::string()).body.find("rnx_runs_stored_total 0\n") != std::string::npos);
  CHECK(m.header("Content-Type").rfind("text/plain; version=0.0.4", 0) == 0);
  CHECK(m.body.find("rnx_http_requests_total{route=\"/api/v1/runs\",method=\"POST\",status=\"201\"}") !=
        std::string::npos);
  CHECK(m.body.find("rnx_verdicts_total{outcome=\"BLOCK\",kind=\"request\"} 1") != std::string::npos);
  CHECK(m.body.find("rnx_runs_stored_total 6") != std::string::npos);
  CHECK(m.body.find("rnx_http_request_duration_seconds_bucket{route=\"/api/v1/runs/{id}/verdict\",le=\"+Inf\"}") !=
        std::string::npos);
  CHECK(m.body.find("rnx_http_request_duration_seconds_count{route=\"/api/v1/runs/{id}/verdict\"} ") !=
        std::string::npos);
  // Every request so far went through the request threads' queue, and none waits now (this one is answered).
  CHECK(m.body.find("rnx_request_queue_wait_seconds_bucket{le=\"+Inf\"} ") != std::string::npos);
  CHECK(m.body.find("\nrnx_request_queue_wait_seconds_count ") != std::string::npos);
  CHECK(m.body.find("\nrnx_request_queue_depth 0\n") != std::string::npos);
}

TEST_CASE("server: auth and error statuses 400 / 401 / 403 / 404 / 405 / 409 / 413 / 422") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo");
  std::string other_token = test::make_token(db, "other");
  test::server_process server(db, {"--body-limit", "1048576"});
  client c{server.url(), token};
  std::string id = c.upload({});

  // 401: no token, wrong scheme, unknown token, tampered token.
  check_error(c.call("POST", "/api/v1/runs", run_json({.commit = "z"}), std::string()), 401, "unauthorized",
              "Authorization");
  CHECK(c.call("GET", "/api/v1/runs/" + id, "", std::string()).header("WWW-Authenticate").rfind("Bearer", 0) == 0);
  {
    auto r = http::request("GET", server.url("/api/v1/runs/" + id), {{"Authorization", "Basic Zm9vOmJhcg=="}});
    check_error(r, 401, "unauthorized", "Bearer");
  }
  std::string tampered = token;
  tampered.back() = tampered.back() == 'a' ? 'b' : 'a';
  check_error(c.call("GET", "/api/v1/runs/" + id, "", tampered), 401, "unauthorized");
  check_error(c.call("GET", "/api/v1/runs/" + id, "", std::string("rnx_not-a-token")), 401, "unauthorized");

  // 403: another project's token, for listings and uploads naming this project. Its runs are 404 (below).
  check_error(c.call("GET", "/api/v1/projects/demo/runs", "", other_token), 403, "forbidden");
  check_error(c.call("POST", "/api/v1/runs", run_json({.commit = "y"}), other_token), 403, "forbidden", "demo");
  check_error(c.call("GET", "/api/v1/runs/" + id, "", other_token), 404, "not_found", "\"other\"");
  check_error(c.call("POST", "/api/v1/runs/" + id + "/verdict", "", other_token), 404, "not_found");
  check_error(c.call("POST", "/api/v1/baselines", R"({"run_id": ")" + id + R"(", "accepted_by": "m", "reason": "r"})",
                     other_token),
              404, "not_found");

  // 404: unknown run, unknown route.
  check_error(c.call("GET", "/api/v1/runs/999999"), 404, "not_found", "999999");
  check_error(c.call("POST", "/api/v1/runs/999999/verdict"), 404, "not_found");
  check_error(c.call("POST", "/api/v1/baselines", R"({"run_id": 424242, "accepted_by": "m", "reason": "r"})"), 404,
              "not_found");
  check_error(c.call("GET", "/api/v2/nothing"), 404, "not_found", "openapi");

  // 405 with Allow.
  auto wrong = c.call("DELETE", "/api/v1/runs/" + id);
  check_error(wrong, 405, "method_not_allowed");
  CHECK(wrong.header("Allow") == "GET");

  // 409: the identical document again.
  check_error(c.call("POST", "/api/v1/runs", run_json({})), 409, "conflict", "run " + id);

  // 400: malformed JSON with position, empty body, bad id, bad query, deep nesting, invalid UTF-8.
  check_error(c.call("POST", "/api/v1/runs", R"({"schema": "rnx.run/v1", )"), 400, "bad_input", "request body:1:");
  check_error(c.call("POST", "/api/v1/runs", ""), 400, "bad_input", "empty");
  check_error(c.call("GET", "/api/v1/runs/abc"), 400, "bad_input", "numeric id");
  check_error(c.call("GET", "/api/v1/runs/-1"), 400, "bad_input");
  check_error(c.call("GET", "/api/v1/projects/demo/runs?limit=0"), 400, "bad_input", "limit");
  check_error(c.call("GET", "/api/v1/projects/demo/runs?limit=ten"), 400, "bad_input", "limit");
  check_error(c.call("GET", "/api/v1/projects/demo/runs?color=red"), 400, "bad_input", "color");
  check_error(c.call("POST", "/api/v1/runs", std::string(100000, '[') + std::string(100000, ']')), 400, "bad_input",
              "too deep");
  check_error(c.call("POST", "/api/v1/runs", "{\"project\": \"d\xff\xfe\"}"), 400, "bad_input");

  // 422: well-formed JSON of the wrong shape names the JSON path.
  check_error(c.call("POST", "/api/v1/runs", R"({"schema": "rnx.run/v1"})"), 422, "invalid", "$");
  {
    auto doc = json::parse(run_json({.commit = "typed"}), "t");
    doc.at("results").as_array()[0].as_object()["batch"] = "eight";
    check_error(c.call("POST", "/api/v1/runs", json::serialize(doc)), 422, "invalid", "$.results[0].batch");
  }
  check_error(c.call("POST", "/api/v1/runs/" + id + "/verdict", R"({"policy": {"rope": 5}})"), 422, "invalid", "rope");
  check_error(c.call("POST", "/api/v1/baselines", R"({"run_id": ")" + id + R"("})"), 422, "invalid", "accepted_by");
  check_error(c.call("POST", "/api/v1/baselines", R"({"run_id": true, "accepted_by": "m", "reason": "r"})"), 422,
              "invalid", "$.run_id");

  // 413: over the (1 MiB here) body limit, declared up front.
  check_error(c.call("POST", "/api/v1/runs", std::string(2u << 20, ' ')), 413, "too_large", "--body-limit");

  // After all of that the server still answers.
  CHECK(c.call("GET", "/healthz").status == 200);
  CHECK(server.alive());
}

TEST_CASE("server: hostile input leaves it serving") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo");
  test::server_process server(db, {"--read-timeout", "6"});
  client c{server.url(), token};

  SUBCASE("a 100 MB body gets 413 without the server buffering it") {
    std::string head = "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token +
                       "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(100u << 20) +
                       "\r\n\r\n";
    std::string body(100u << 20, '7');
    auto reply = test::raw_exchange(server.port(), head + body, std::chrono::seconds(30));
    CHECK(reply.rfind("HTTP/1.1 413", 0) == 0);
    CHECK(reply.find("too_large") != std::string::npos);
  }
  SUBCASE("an HTTP/1.0 request over the limit is answered in HTTP/1.0") {
    std::string head = "POST /api/v1/runs HTTP/1.0\r\nHost: x\r\nAuthorization: Bearer " + token +
                       "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(32u << 20) +
                       "\r\n\r\n";
    auto reply = test::raw_exchange(server.port(), head + std::string(32u << 20, '7'), std::chrono::seconds(30));
    CHECK_MESSAGE(reply.rfind("HTTP/1.0 413", 0) == 0, reply.substr(0, 200));
  }
  SUBCASE("a chunked body over the limit is cut off with 413 too") {
    std::string head = "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::string chunk(1u << 20, 'x');
    std::string body;
    char size_line[32];
    std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk.size());
    for (int i = 0; i < 20; ++i) body += size_line + chunk + "\r\n";
    body += "0\r\n\r\n";
    auto reply = test::raw_exchange(server.port(), head + body, std::chrono::seconds(30));
    CHECK(reply.rfind("HTTP/1.1 413", 0) == 0);
  }
  SUBCASE("garbage instead of HTTP is a 400") {
    auto reply = test::raw_exchange(server.port(), "\x01\x02 hello\r\n\r\n");
    CHECK(reply.rfind("HTTP/1.1 400", 0) == 0);
    CHECK(reply.find("malformed HTTP request") != std::string::npos);
  }
  SUBCASE("path traversal and SQL in project names are refused before any lookup") {
    for (std::string path :
         {"/api/v1/projects/..%2F..%2Fetc%2Fpasswd/runs", "/api/v1/projects/%2e%2e/runs",
          "/api/v1/projects/x'%3B%20DROP%20TABLE%20runs%3B--/runs", "/api/v1/projects/%C3%28/history"}) {
      CAPTURE(path);
      check_error(c.call("GET", path), 400, "bad_input", "project name");
    }
    auto raw = test::raw_exchange(server.port(),
                                  "GET /api/v1/projects/../../etc/passwd/runs HTTP/1.1\r\nHost: x\r\n"
                                  "Connection: close\r\n\r\n");
    CHECK((raw.rfind("HTTP/1.1 404", 0) == 0 || raw.rfind("HTTP/1.1 400", 0) == 0));
  }
  SUBCASE("SQL in document fields is stored as plain text") {
    std::string id = c.upload({.branch = "x'); DROP TABLE runs; --", .commit = "'; DELETE FROM tokens; --"});
    auto got = c.call("GET", "/api/v1/runs/" + id);
    REQUIRE(got.status == 200);
    CHECK(c.json_of(got).at("run").at("branch").as_string() == "x'); DROP TABLE runs; --");
    CHECK(c.call("GET", "/api/v1/projects/demo/runs").status == 200);  // tokens and runs still there
  }
  SUBCASE("a client that stalls mid-request is cut off by the read timeout, others are served meanwhile") {
    namespace asio = boost::asio;
    asio::io_context ioc;
    asio::ip::tcp::socket slow(ioc);
    slow.connect({asio::ip::make_address("127.0.0.1"), server.port()});
    asio::write(slow,
                asio::buffer(std::string("POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")));
    CHECK(c.call("GET", "/healthz").status == 200);
    char byte = 0;
    boost::system::error_code ec;
    // Returns only when the server closes the stalled connection (the test's ctest TIMEOUT bounds the wait).
    slow.read_some(asio::buffer(&byte, 1), ec);
    CHECK(ec);
  }
  CHECK(c.call("GET", "/healthz").status == 200);
  CHECK(server.alive());
}

TEST_CASE("server: a flood of idle connections beyond --max-connections does not lock out later clients for good") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  test::server_process server(db, {"--max-connections", "8", "--header-timeout", "1"});
  namespace asio = boost::asio;
  asio::io_context ioc;
  std::vector<asio::ip::tcp::socket> idle;
  for (int i = 0; i < 8; ++i) {
    idle.emplace_back(ioc);
    idle.back().connect({asio::ip::make_address("127.0.0.1"), server.port()});
  }
  // All slots are taken by idle sockets; the server closes each once its header timeout passes (each is read here
  // until it is closed, however long that takes: the test's ctest TIMEOUT bounds it).
  for (auto& socket : idle) {
    char byte = 0;
    boost::system::error_code ec;
    socket.read_some(asio::buffer(&byte, 1), ec);
    CHECK(ec);
  }
  // The next client gets through, and once the closed sessions have ended it is the only connection open.
  test::wait_until([&] {
    auto r = http::request("GET", server.url("/metrics"));
    REQUIRE(r.status == 200);
    return r.body.find("rnx_open_connections 1\n") != std::string::npos;
  });
}

TEST_CASE("token scopes: a 401/403 matrix over pull-request uploads, push uploads, verdicts and accepts") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  const std::string upload = test::make_token(db, "demo", "upload");
  const std::string baseline = test::make_token(db, "demo", "baseline");
  const std::string accept = test::make_token(db, "demo", "accept");
  const std::string admin = test::make_token(db, "demo", "admin");
  const std::string other_project = test::make_token(db, "other", "admin");
  std::string legacy;
  {
    // A token made before scopes existed: the migration marks it legacy (everything, with a warning).
    store::database d(db);
    legacy = d.create_token("demo", "old-ci", store::token_scope::admin).token;
  }
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    CHECK(sqlite3_exec(raw, "UPDATE tokens SET scope = 'legacy' WHERE label = 'old-ci'", nullptr, nullptr, nullptr) ==
          SQLITE_OK);
    sqlite3_close(raw);
  }
  test::server_process server(db);
  client c{server.url(), upload};
  int commit = 0;
  auto pr_run = [&] {
    return test::run_json({.branch = "feature", .pull_request = 2, .commit = "pr" + std::to_string(++commit)});
  };
  auto push_run = [&] { return test::run_json({.branch = "main", .commit = "push" + std::to_string(++commit)}); };
  auto accept_body = [](const std::string& id) {
    return R"({"run_id": ")" + id + R"(", "accepted_by": "bob", "reason": "intended"})";
  };

  // Pull-request runs: upload, baseline, admin and legacy may; accept may not; another project's token is 403;
  // none is 401.
  check_error(c.call("POST", "/api/v1/runs", pr_run(), std::string()), 401, "unauthorized", "Authorization");
  check_error(c.call("POST", "/api/v1/runs", pr_run(), "rnx_000000000000_" + std::string(48, '0')), 401, "unauthorized",
              "not valid");
  check_error(c.call("POST", "/api/v1/runs", pr_run(), accept), 403, "forbidden",
              "to upload a pull-request run a token needs the upload, baseline or admin scope");
  check_error(c.call("POST", "/api/v1/runs", pr_run(), other_project), 403, "forbidden", "project \"other\"");
  std::string id;
  for (const auto& t : {upload, baseline, admin, legacy}) {
    auto r = c.call("POST", "/api/v1/runs", pr_run(), t);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    CHECK_FALSE(c.json_of(r).at("baseline").as_bool());
    id = std::string(c.json_of(r).at("id").as_string());
  }

  // Push runs move the branch's baseline: an accept. The upload token gets 403 saying which scope and how.
  auto refused = c.call("POST", "/api/v1/runs", push_run(), upload);
  check_error(refused, 403, "forbidden",
              "to upload a push run (it becomes the branch's baseline) a token needs the baseline, accept or admin "
              "scope");
  CHECK(refused.body.find("rnx-server admin token create --project demo --scope baseline") != std::string::npos);
  for (const auto& t : {baseline, accept, admin, legacy}) {
    auto r = c.call("POST", "/api/v1/runs", push_run(), t);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    CHECK(c.json_of(r).at("baseline").as_bool());
  }

  // Verdicts: upload, baseline, admin and legacy.
  check_error(c.call("POST", "/api/v1/runs/" + id + "/verdict", "", accept), 403, "forbidden",
              "a token needs the upload, baseline or admin scope");
  for (const auto& t : {upload, baseline, admin, legacy}) {
    CHECK(c.call("POST", "/api/v1/runs/" + id + "/verdict", "", t).status == 200);
  }

  // Accepting: accept, admin and legacy may; the CI's upload and baseline tokens may not.
  for (const auto& t : {upload, baseline}) {
    check_error(c.call("POST", "/api/v1/baselines", accept_body(id), t), 403, "forbidden",
                "to accept a run as a baseline a token needs the accept or admin scope");
  }
  check_error(c.call("POST", "/api/v1/baselines", accept_body(id), std::string()), 401, "unauthorized");
  check_error(c.call("POST", "/api/v1/baselines", accept_body(id), other_project), 404, "not_found");
  auto by_accept = c.call("POST", "/api/v1/baselines", accept_body(id), accept);
  REQUIRE_MESSAGE(by_accept.status == 201, by_accept.body);
  CHECK(c.json_of(by_accept).at("accepted_by").as_string() == "bob (token \"test-accept\", accept scope)");
  auto by_legacy = c.call("POST", "/api/v1/baselines", accept_body(id), legacy);
  CHECK((by_legacy.status == 201 || by_legacy.status == 409));
  CHECK(by_legacy.status != 403);

  // Reading stays open to every scope of the project.
  for (const auto& t : {upload, baseline, accept, admin, legacy}) {
    CHECK(c.call("GET", "/api/v1/projects/demo/runs", "", t).status == 200);
  }
}

TEST_CASE("token scopes: an upload token cannot turn a slow run into the baseline that passes a slow PR") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  const std::string upload = test::make_token(db, "demo", "upload");
  const std::string baseline = test::make_token(db, "demo", "baseline");
  test::server_process server(db);
  client c{server.url(), upload};
  REQUIRE(c.call("POST", "/api/v1/runs", test::run_json({.branch = "main", .commit = "fast", .seed = 1}), baseline)
              .status == 201);
  // The attack: the same slow code uploaded as a push to main, then as the pull request.
  auto moved = c.call("POST", "/api/v1/runs",
                      test::run_json({.branch = "main", .commit = "slow", .scale = 1.3, .seed = 2}), upload);
  CHECK(moved.status == 403);
  auto pr = c.call("POST", "/api/v1/runs",
                   test::run_json({.branch = "feature", .pull_request = 9, .commit = "slow", .scale = 1.3, .seed = 3}),
                   upload);
  REQUIRE_MESSAGE(pr.status == 201, pr.body);
  auto verdict =
      c.call("POST", "/api/v1/runs/" + std::string(c.json_of(pr).at("id").as_string()) + "/verdict", "", upload);
  REQUIRE_MESSAGE(verdict.status == 200, verdict.body);
  CHECK(c.json_of(verdict).at("verdict").as_string() == "BLOCK");
}

TEST_CASE("token scopes: an unknown scope is refused with the choices") {
  test::temp_dir dir;
  store::database d(dir.file("rnx.sqlite"));
  d.ensure_project("demo");
  try {
    d.create_token("demo", "x", store::parse_token_scope("root"));
    FAIL("expected a usage error");
  } catch (const error& e) {
    CHECK(e.code() == errc::usage);
    CHECK(std::string(e.what()) ==
          "token scope \"root\" is not one of upload (CI on pull requests: pull-request runs and verdicts), baseline "
          "(CI on a protected branch: push runs, which become its baseline, and what upload may), accept (accepting "
          "baselines and push runs) or admin (all)");
  }
  CHECK_THROWS_AS(d.create_token("demo", "x", store::token_scope::legacy), error);
  for (auto s : {store::token_scope::upload, store::token_scope::baseline, store::token_scope::accept,
                 store::token_scope::admin, store::token_scope::legacy}) {
    CHECK(store::parse_token_scope(store::to_string(s)) == s);
  }
}

TEST_CASE("server: a paired verdict is stored only when it follows from two runs of the token's project") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string admin = test::make_token(db, "demo");
  std::string upload = test::make_token(db, "demo", "upload");
  std::string other_token = test::make_token(db, "other");
  test::server_process server(db);
  client c{server.url(), upload};
  auto paired_doc = [](const run_spec& s, const std::string& side) {
    run_document run = test::make_run(s);
    run.env.env_id = compute_env_id(run.env);
    run.pairing = pairing_info{"pair-7", *pair_side_from_string(side), ""};
    return json::serialize(to_json(run));
  };
  auto upload_doc = [&](const std::string& doc) {
    auto r = c.call("POST", "/api/v1/runs", doc);
    REQUIRE(r.status == 201);
    return std::string(c.json_of(r).at("id").as_string());
  };
  const std::string base_id =
      upload_doc(paired_doc({.branch = "main", .pull_request = 7, .commit = "b", .seed = 1}, "base"));
  const std::string head_id =
      upload_doc(paired_doc({.branch = "feature", .pull_request = 7, .commit = "h", .scale = 1.2, .seed = 2}, "head"));
  const run_document base_doc =
      run_from_json(json::parse(c.call("GET", "/api/v1/runs/" + base_id).body, "b").at("document"), "base");
  const run_document head_doc =
      run_from_json(json::parse(c.call("GET", "/api/v1/runs/" + head_id).body, "h").at("document"), "head");
  verdict_document decided = stats::judge_runs(base_doc, head_doc, gate_policy{});
  REQUIRE(decided.verdict == overall::block);
  auto body = [&](const std::string& base, const verdict_document& v) {
    return json::serialize(boost::json::object{{"base_run_id", base}, {"verdict", to_json(v)}});
  };
  const std::string target = "/api/v1/runs/" + head_id + "/paired-verdict";

  auto stored = c.call("POST", target, body(base_id, decided));
  REQUIRE_MESSAGE(stored.status == 200, stored.body);
  auto v = verdict_from_json(json::parse(stored.body, "stored"), "stored");
  CHECK(v.verdict == overall::block);
  REQUIRE(v.baseline);
  CHECK(v.baseline->id == base_id);
  // The run's evidence (the page's JSON) shows it, with the base run beside.
  auto evidence = json::parse(c.call("GET", "/api/v1/runs/" + head_id + "/evidence").body, "evidence");
  CHECK(evidence.at("verdict").at("verdict").as_string() == "BLOCK");
  CHECK(evidence.at("base_run").at("id").as_string() == base_id);

  verdict_document flipped = decided;
  flipped.verdict = overall::pass;
  check_error(c.call("POST", target, body(base_id, flipped)), 422, "invalid", "the stored runs give BLOCK");
  check_error(c.call("POST", target, R"({"base_run_id": ")" + base_id + R"(", "verdict": {"schema": "x"}})"), 422,
              "invalid", "$.verdict");
  check_error(c.call("POST", target, R"({"base_run_id": ")" + base_id + R"("})"), 422, "invalid", "verdict");
  check_error(c.call("POST", target, body("abc", decided)), 422, "invalid", "base_run_id");
  check_error(c.call("POST", target, body("999999", decided)), 404, "not_found", "999999");
  check_error(c.call("POST", target, body(base_id, decided), std::string()), 401, "unauthorized");
  check_error(c.call("POST", target, body(base_id, decided), other_token), 404, "not_found", "\"other\"");
  check_error(c.call("POST", "/api/v1/runs/999999/paired-verdict", body(base_id, decided)), 404, "not_found");

  // Who a token is, before a job measures anything.
  auto who = c.call("GET", "/api/v1/projects/demo/token");
  REQUIRE(who.status == 200);
  auto who_json = c.json_of(who);
  CHECK(who_json.at("scope").as_string() == "upload");
  CHECK(json::serialize(who_json.at("allows")) == R"(["upload_pull_request_run","ask_verdict"])");
  check_error(c.call("GET", "/api/v1/projects/demo/token", "", other_token), 403, "forbidden");
  check_error(c.call("GET", "/api/v1/projects/demo/token", "", std::string()), 401, "unauthorized");

  // An upload token refused for accepting is told its scope and the one it needs, and where that token is kept.
  check_error(
      c.call("POST", "/api/v1/baselines", R"({"run_id": ")" + head_id + R"(", "accepted_by": "m", "reason": "r"})"),
      403, "forbidden", "has the upload scope; to accept a run as a baseline a token needs the accept");
  CHECK(c.call("POST", "/api/v1/baselines", R"({"run_id": ")" + head_id + R"(", "accepted_by": "m", "reason": "r"})")
            .body.find("RNX_ACCEPT_TOKEN") != std::string::npos);
}

TEST_CASE("server: kernel names rnx.toml refuses and a client-chosen env_id are refused") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  test::server_process server(db);
  client c{server.url(), test::make_token(db, "demo")};
  run_document run = test::make_run({.branch = "feature", .pull_request = 3});
  run.env.env_id = compute_env_id(run.env);
  run.results[0].kernel = "attention q,k,v = B,4";
  check_error(c.call("POST", "/api/v1/runs", json::serialize(to_json(run))), 422, "invalid", "$.results[0].kernel");
  run.results[0].kernel = "attention";
  run.env.env_id = "0123456789abcdef";  // another machine's baselines
  check_error(c.call("POST", "/api/v1/runs", json::serialize(to_json(run))), 422, "invalid",
              "$.environment.env_id: \"0123456789abcdef\" is not the hash");
  run.env.env_id = compute_env_id(run.env);
  CHECK(c.call("POST", "/api/v1/runs", json::serialize(to_json(run))).status == 201);
  // An imported result keeps its harness's name.
  run.commit = "imported";
  run.results[0].kernel = "BM_copy/1024";
  run.results[0].origin = "BM_copy/1024";
  CHECK(c.call("POST", "/api/v1/runs", json::serialize(to_json(run))).status == 201);
}

TEST_CASE("server: a run of another project answers as an unknown id does, word for word, on every run route") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "secretproj");
  std::string other_token = test::make_token(db, "other");
  test::server_process server(db);
  client owner{server.url(), token};
  const std::string hidden =
      owner.upload({.project = "secretproj", .branch = "feature", .pull_request = 3, .commit = "h"});
  const std::string second =
      owner.upload({.project = "secretproj", .branch = "feature", .pull_request = 3, .commit = "i"});
  const std::string foreign =
      client{server.url(), other_token}.upload({.project = "other", .branch = "feature", .pull_request = 4});
  const std::string unknown = "424242";
  // Every route that takes a run id (in the path, or in the body): method, path and body with the id as "ID".
  struct route_case {
    std::string method, path, body;
  };
  const route_case routes[] = {
      {"GET", "/api/v1/runs/ID", ""},
      {"POST", "/api/v1/runs/ID/verdict", ""},
      {"POST", "/api/v1/runs/ID/paired-verdict", R"({"base_run_id": "ID", "verdict": {}})"},
      {"POST", "/api/v1/runs/" + foreign + "/paired-verdict", R"({"base_run_id": "ID", "verdict": {}})"},
      {"GET", "/api/v1/runs/ID/evidence", ""},
      {"POST", "/api/v1/baselines", R"({"run_id": "ID", "accepted_by": "m", "reason": "r"})"},
      {"GET", "/runs/ID", ""},
      {"GET", "/compare?runs=ID," + second, ""},
  };
  auto replace_all = [](std::string text, const std::string& from, const std::string& to) {
    for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
      text.replace(at, from.size(), to);
    }
    return text;
  };
  // Status, type and body with the id where it is named ("run N", "/runs/N") written as "@".
  auto shape = [&](const http::response& r, const std::string& id) {
    std::string text = std::to_string(r.status) + " " + r.header("Content-Type") + "\n" + r.body;
    return replace_all(replace_all(text, "run " + id, "run @"), "/runs/" + id, "/runs/@");
  };
  // Without a token, with another project's token, and with a token that is not valid.
  for (const std::string& caller : {std::string(), other_token, "rnx_000000000000_" + std::string(48, '0')}) {
    for (const auto& route : routes) {
      CAPTURE(route.path);
      CAPTURE(caller);
      auto ask = [&](const std::string& id) {
        return owner.call(route.method, replace_all(route.path, "ID", id), replace_all(route.body, "ID", id), caller);
      };
      auto hidden_answer = ask(hidden);
      auto unknown_answer = ask(unknown);
      CHECK(shape(hidden_answer, hidden) == shape(unknown_answer, unknown));
      CHECK(hidden_answer.body.find("secretproj") == std::string::npos);
      // The API's own routes answer 401 before any lookup when no valid token came; otherwise 404, as for no run.
      CHECK((hidden_answer.status == 404 || hidden_answer.status == 401));
      if (caller == other_token) CHECK(hidden_answer.status == 404);
    }
  }
  // The project's own token still reads its run.
  CHECK(owner.call("GET", "/api/v1/runs/" + hidden).status == 200);
  CHECK(owner.call("GET", "/runs/" + hidden).status == 200);
}
