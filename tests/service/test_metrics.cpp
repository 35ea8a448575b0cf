// /metrics through api::handle_request (no socket): without a token it counts public projects and requests that carried
// no valid token, never a private project's runs, uploads, verdicts or requests; a token adds its own project only.
#include "service_test_support.hpp"

#include "rnx/service/api.hpp"

#include <doctest/doctest.h>

using namespace rnx;
using namespace rnx::test;
namespace http = boost::beast::http;

namespace {

struct metrics_fixture {
  temp_dir dir;
  std::string db_path = dir.file("rnx.sqlite");
  std::string secret_token = make_token(db_path, "secret");  // private: the default
  std::string open_token = make_token(db_path, "open");
  store::database db{db_path};
  service::metrics metrics;
  service::api api{db, metrics, nullptr};

  metrics_fixture() { db.set_project_public("open", true); }

  service::response call(http::verb verb, const std::string& target, const std::string& bearer,
                         const std::string& body = "") {
    service::request req{verb, target, 11};
    if (!bearer.empty()) req.set(http::field::authorization, "Bearer " + bearer);
    req.set(http::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
    return api.handle_request(req);
  }

  // `n` pull-request uploads of `project`, each with a verdict asked for; main's baseline first.
  void uploads(const std::string& project, const std::string& token, int n) {
    auto base = call(http::verb::post, "/api/v1/runs", token, run_json({.project = project, .commit = "base"}));
    REQUIRE_MESSAGE(base.result_int() == 201, base.body());
    for (int i = 0; i < n; ++i) {
      auto up = call(http::verb::post, "/api/v1/runs", token,
                     run_json({.project = project,
                               .branch = "feature",
                               .pull_request = 1,
                               .commit = "pr" + std::to_string(i),
                               .seed = static_cast<unsigned>(i + 2)}));
      REQUIRE_MESSAGE(up.result_int() == 201, up.body());
      auto id = json::parse(up.body(), "upload answer").as_object().at("id").as_string();
      auto verdict = call(http::verb::post, "/api/v1/runs/" + std::string(id) + "/verdict", token, "{}");
      REQUIRE_MESSAGE(verdict.result_int() == 200, verdict.body());
    }
  }

  std::string metrics_text(const std::string& bearer = "") {
    auto r = call(http::verb::get, "/metrics", bearer);
    REQUIRE(r.result_int() == 200);
    return r.body();
  }
};

// The value of the first sample line that starts with `series` (a name with its labels), or -1 when there is none.
long long sample(const std::string& text, const std::string& series) {
  auto at = text.find("\n" + series + " ");
  if (at == std::string::npos) return -1;
  return std::stoll(text.substr(at + series.size() + 2));
}

long long verdicts(const std::string& text) {
  long long total = 0;
  for (const char* outcome : {"PASS", "WARN", "BLOCK"}) {
    auto n = sample(text, std::string("rnx_verdicts_total{outcome=\"") + outcome + "\",kind=\"request\"}");
    total += n > 0 ? n : 0;
  }
  return total;
}

const std::string uploads_series = "rnx_http_requests_total{route=\"/api/v1/runs\",method=\"POST\",status=\"201\"}";

}  // namespace

TEST_CASE("metrics: without a token nothing of a private project is counted; its own token adds it") {
  metrics_fixture f;
  f.uploads("secret", f.secret_token, 3);  // 4 runs, 3 verdicts
  f.uploads("open", f.open_token, 1);      // 2 runs, 1 verdict

  const std::string anonymous = f.metrics_text();
  CHECK(sample(anonymous, "rnx_runs") == 2);
  CHECK(sample(anonymous, "rnx_runs_stored_total") == 2);
  CHECK(sample(anonymous, uploads_series) == 2);
  CHECK(verdicts(anonymous) == 1);
  // Nor does a private project's route appear through its latency histogram.
  CHECK(sample(anonymous, "rnx_http_request_duration_seconds_count{route=\"/api/v1/runs\"}") == 2);
  // The server's own figures are for all.
  CHECK(anonymous.find("\nrnx_open_connections ") != std::string::npos);

  // Another project's token sees no more than anyone.
  const std::string as_open = f.metrics_text(f.open_token);
  CHECK(sample(as_open, "rnx_runs") == 2);
  CHECK(sample(as_open, uploads_series) == 2);

  // The private project's own token sees its figures too.
  const std::string as_secret = f.metrics_text(f.secret_token);
  CHECK(sample(as_secret, "rnx_runs") == 6);
  CHECK(sample(as_secret, "rnx_runs_stored_total") == 6);
  CHECK(sample(as_secret, uploads_series) == 6);
  CHECK(verdicts(as_secret) == 4);

  // A project made public is counted for all from then on; a revoked token sees what anyone sees.
  f.db.set_project_public("secret", true);
  CHECK(sample(f.metrics_text(), "rnx_runs") == 6);
  f.db.set_project_public("secret", false);
  f.db.revoke_token(f.secret_token);
  CHECK(sample(f.metrics_text(f.secret_token), "rnx_runs") == 2);
}

TEST_CASE("metrics: requests without a valid token are counted for all, under no project") {
  metrics_fixture f;
  CHECK(f.call(http::verb::get, "/healthz", "").result_int() == 200);
  CHECK(f.call(http::verb::get, "/api/v1/projects/secret/token", "rnx_0123456789ab_wrong").result_int() == 401);
  const std::string anonymous = f.metrics_text();
  CHECK(sample(anonymous, "rnx_http_requests_total{route=\"/healthz\",method=\"GET\",status=\"200\"}") == 1);
  CHECK(sample(anonymous,
               "rnx_http_requests_total{route=\"/api/v1/projects/{project}/token\",method=\"GET\",status=\"401\"}") ==
        1);
  // The same check with the private project's valid token is the project's own.
  CHECK(f.call(http::verb::get, "/api/v1/projects/secret/token", f.secret_token).result_int() == 200);
  CHECK(sample(f.metrics_text(),
               "rnx_http_requests_total{route=\"/api/v1/projects/{project}/token\",method=\"GET\",status=\"200\"}") ==
        -1);
  CHECK(sample(f.metrics_text(f.secret_token),
               "rnx_http_requests_total{route=\"/api/v1/projects/{project}/token\",method=\"GET\",status=\"200\"}") ==
        1);
}
