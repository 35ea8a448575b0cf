// The JSON rnx-server writes, across every endpoint and the webhook payload: ids are always decimal strings,
// numbers are plain decimals (no exponent), and an id given as an integer by an older client still works.
#include "service_test_support.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"

#include <doctest/doctest.h>

#include <sqlite3.h>

using namespace rnx;
using rnx::test::run_json;

namespace {

bool is_id_key(std::string_view key) {
  return key == "id" || (key.size() > 3 && key.substr(key.size() - 3) == "_id" && key != "env_id");
}

// Every "id" and "*_id" member (env_id is a hash, not an id) holds the decimal string of a positive integer.
void check_ids(const boost::json::value& v, const std::string& path) {
  if (const auto* o = v.if_object()) {
    for (const auto& [key, member] : *o) {
      std::string where = path + "." + std::string(key);
      if (is_id_key(key) && !member.is_null()) {
        CAPTURE(where);
        const std::string kind(json::kind_name(member));
        REQUIRE_MESSAGE(member.is_string(), kind);
        std::string text(member.get_string());
        CHECK(!text.empty());
        CHECK(text.front() != '0');
        CHECK(text.find_first_not_of("0123456789") == std::string::npos);
      }
      check_ids(member, where);
    }
  } else if (const auto* a = v.if_array()) {
    for (std::size_t i = 0; i < a->size(); ++i) check_ids((*a)[i], path + "[" + std::to_string(i) + "]");
  }
}

// No number in the text has an exponent: outside strings, an 'e' or 'E' only ever follows a digit in one.
void check_plain_numbers(const std::string& body) {
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    char c = body[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if ((c == 'e' || c == 'E') && i > 0 && (std::isdigit(static_cast<unsigned char>(body[i - 1])) != 0)) {
      FAIL("exponent notation at offset " << i << ": " << body.substr(i > 20 ? i - 20 : 0, 40));
    }
  }
}

struct api_client {
  std::string base;
  std::string token;
  http::response call(const std::string& method, const std::string& path, const std::string& body = "") const {
    return http::request(method, base + path,
                         {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}}, body,
                         std::chrono::seconds(20));
  }
  // The response, checked: status, ids, plain numbers.
  boost::json::value checked(const std::string& method, const std::string& path, int status,
                             const std::string& body = "") const {
    auto r = call(method, path, body);
    CAPTURE(method + " " + path);
    REQUIRE_MESSAGE(r.status == status, r.body);
    check_plain_numbers(r.body);
    auto v = json::parse(r.body, method + " " + path);
    check_ids(v, "$");
    return v;
  }
};

}  // namespace

TEST_CASE("API JSON: ids are decimal strings in every response and numbers are plain decimals") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "admin");
  test::recording_server hook;
  {
    store::database d(db);
    d.add_webhook(d.find_project("demo")->id, hook.url("/generic"), store::webhook_format::generic);
  }
  test::server_process server(db);
  api_client c{server.url(), token};

  auto base = c.checked("POST", "/api/v1/runs", 201, run_json({.commit = "base", .seed = 1}));
  std::string base_id(base.at("id").as_string());
  c.checked("POST", "/api/v1/runs", 201, run_json({.commit = "slower", .scale = 1.3, .seed = 2}));
  auto head = c.checked("POST", "/api/v1/runs", 201,
                        run_json({.branch = "feature", .pull_request = 5, .commit = "head", .seed = 3}));
  std::string head_id(head.at("id").as_string());
  CHECK(head.at("pull_request").is_int64());  // a pull request number, not an id: stays a number

  c.checked("GET", "/api/v1/runs/" + head_id, 200);
  // A tiny policy value comes back as written, not as 1E-5.
  auto verdict = c.checked("POST", "/api/v1/runs/" + head_id + "/verdict", 200,
                           R"({"policy": {"rope": 0.00001, "probability": 0.95}})");
  CHECK(json::serialize(verdict.at("policy").at("rope")) == "0.00001");
  CHECK(verdict.at("head_run_id").as_string() == head_id);
  REQUIRE(verdict.at("baseline").is_object());
  c.checked("GET", "/api/v1/projects/demo/runs?limit=10", 200);
  c.checked("GET", "/api/v1/projects/demo/history", 200);
  c.checked("GET", "/healthz", 200);

  // Accepting by the string id the API returned; and, as older clients did, by an integer: both are strings back.
  auto by_string = c.checked("POST", "/api/v1/baselines", 201,
                             R"({"run_id": ")" + head_id + R"(", "accepted_by": "a", "reason": "intended"})");
  CHECK(by_string.at("run_id").as_string() == head_id);
  auto by_integer = c.checked("POST", "/api/v1/baselines", 201,
                              R"({"run_id": )" + base_id + R"(, "accepted_by": "a", "reason": "back to base"})");
  CHECK(by_integer.at("run_id").as_string() == base_id);

  // The regression webhook (the second push is 30% slower) follows the same rules.
  auto got = hook.wait_for(1);
  REQUIRE(got.size() >= 1);
  check_plain_numbers(got[0].body);
  auto payload = json::parse(got[0].body, "webhook");
  check_ids(payload, "$");
  CHECK(payload.at("verdict").at("baseline").at("id").as_string() == base_id);
}

TEST_CASE(
    "stored runs: plain-decimal documents, duplicate digests as before, so a re-upload across an upgrade is 409") {
  test::temp_dir dir;
  store::database db(dir.file("rnx.sqlite"));
  auto project = db.ensure_project("demo");
  run_document run = test::make_run({.commit = "digest"});
  auto stored = db.insert_run(project.id, run);
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(dir.file("rnx.sqlite").c_str(), &raw) == SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  REQUIRE(sqlite3_prepare_v2(raw, "SELECT digest, document FROM runs WHERE id = ?1", -1, &st, nullptr) == SQLITE_OK);
  sqlite3_bind_int64(st, 1, stored.run.id);
  REQUIRE(sqlite3_step(st) == SQLITE_ROW);
  std::string digest(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
  std::string document(reinterpret_cast<const char*>(sqlite3_column_text(st, 1)));
  sqlite3_finalize(st);
  sqlite3_close(raw);
  // The digest rows written before this version hold: Boost.JSON's serialization of the same document.
  CHECK(digest == store::sha256_hex(boost::json::serialize(to_json(run))));
  check_plain_numbers(document);
  try {
    db.insert_run(project.id, run);
    FAIL("a duplicate was stored");
  } catch (const error& e) {
    CHECK(std::string(e.what()).find("already stored as run " + std::to_string(stored.run.id)) != std::string::npos);
  }
}
