// The HTTP API of rnx-server as a pure function of a request: routing, auth, validation, JSON answers.
//
// handle_request never touches a socket, so tests and the fuzzer call it directly:
//   rnx::service::api api(db, metrics, nullptr, {});
//   auto res = api.handle_request(req);   // never throws; errors are {"error": {"code", "message"}}
#pragma once

#include "rnx/service/admission.hpp"
#include "rnx/service/metrics.hpp"
#include "rnx/service/store.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::service {

namespace beast_http = boost::beast::http;
using request = beast_http::request<beast_http::string_body>;
using response = beast_http::response<beast_http::string_body>;

class notifier;
class page_routes;
class router;
struct route_call;

struct api_options {
  std::size_t max_json_depth = 64;  // deeper documents are bad input, not a stack risk
  gate_policy default_policy;       // when a verdict request names no policy
  // How long after a run group's first shard its verdict waits for the others (docs/scaling.md).
  std::chrono::seconds shard_timeout{3600};
};

class api {
 public:
  // `notify` may be null: then the regression check after a baseline upload runs inline, without webhooks.
  api(store::database& db, metrics& m, notifier* notify, api_options options = {});
  ~api();

  // Checks the request's credentials itself (tests, the fuzzer); the server checks them first and passes them on.
  response handle_request(const request& req);
  // `who` is check_credentials(req): the request is counted in /metrics under its token's project.
  response handle_request(const request& req, const credential& who);
  // The token `req` carries (bearer or the sign-in cookie), checked against the database on every request: none,
  // valid (its id and project) or invalid (unknown, revoked, expired); never throws (a database error reads as none,
  // and the request's own answer reports it). The server's admission decides with it before answering.
  credential check_credentials(const request& req);
  // The answer to a request the admission refused (401 for a token no longer valid, 429 over a connection cap),
  // closing the connection; `who` is its credential.
  response refusal(const request& req, request_admission what, const credential& who);

 private:
  void add_api_routes();
  response healthz(const route_call& c);
  response metrics_text(const route_call& c);
  response post_run(const route_call& c);
  response get_run(const route_call& c);
  response post_verdict(const route_call& c);
  response post_paired_verdict(const route_call& c);  // the paired gate's verdict, with its base run
  response get_token_check(const route_call& c);      // who a token is; the gate asks before measuring
  response post_baseline(const route_call& c);
  response list_runs(const route_call& c);
  response history(const route_call& c);
  response changes(const route_call& c);
  response get_group(const route_call& c);           // a sharded run's group (docs/scaling.md)
  response post_group_verdict(const route_call& c);  // its verdict once complete or due

  store::auth_result authenticate(const request& req);
  store::project_info authorize_project(const store::auth_result& who, const std::string& project);
  // The summary of run `run_id` when it is of the token's project; otherwise 404, the same as for an unknown id.
  store::run_summary run_of_token_project(const store::auth_result& who, std::int64_t run_id);
  // 403 naming the scopes that may, unless the token's scope allows `action`; a legacy token passes with a warning.
  void require_scope(const store::auth_result& who, store::token_action action);

  store::database& db_;
  metrics& metrics_;
  notifier* notify_;
  api_options options_;
  std::unique_ptr<page_routes> pages_;  // the pages for people and the JSON behind their charts (pages_routes.cpp)
  std::unique_ptr<router> router_;      // every route of the server, the API's and the pages' (router.hpp)
};

// Builds an error response in the API's JSON form (exposed for the server's transport-level errors).
response error_response(int status, std::string_view code, std::string_view message, unsigned version, bool keep_alive);

}  // namespace rnx::service
