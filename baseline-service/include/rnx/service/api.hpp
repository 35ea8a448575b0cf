// The HTTP API of rnx-server as a pure function of a request: routing, auth, validation, JSON answers.
//
// handle_request never touches a socket, so tests and the fuzzer call it directly:
//   rnx::service::api api(db, metrics, nullptr, {});
//   auto res = api.handle_request(req);   // never throws; errors are {"error": {"code", "message"}}
#pragma once

#include "rnx/service/metrics.hpp"
#include "rnx/service/store.hpp"

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <cstddef>
#include <initializer_list>
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

struct api_options {
  std::size_t max_json_depth = 64;  // deeper documents are bad input, not a stack risk
  gate_policy default_policy;       // when a verdict request names no policy
};

class api {
 public:
  // `notify` may be null: then the regression check after a baseline upload runs inline, without webhooks.
  api(store::database& db, metrics& m, notifier* notify, api_options options = {});
  ~api();

  response handle_request(const request& req);

 private:
  struct context;
  response route(const request& req, context& ctx);
  response post_run(const request& req, context& ctx);
  response get_run(const request& req, context& ctx, std::int64_t run_id);
  response post_verdict(const request& req, context& ctx, std::int64_t run_id);
  response post_paired_verdict(const request& req, context& ctx, std::int64_t run_id);
  response get_token_check(const request& req, context& ctx, const std::string& project);
  response post_baseline(const request& req, context& ctx);
  response list_runs(const request& req, context& ctx, const std::string& project);
  response history(const request& req, context& ctx, const std::string& project);
  store::auth_result authenticate(const request& req);
  store::project_info authorize_project(const store::auth_result& who, const std::string& project);
  // 403 naming the scopes that may, unless the token's scope allows `action`; a legacy token passes with a warning.
  void require_scope(const store::auth_result& who, store::token_action action);

  store::database& db_;
  metrics& metrics_;
  notifier* notify_;
  api_options options_;
  std::unique_ptr<page_routes> pages_;  // the pages for people and the JSON behind their charts (pages_routes.cpp)
};

// Builds an error response in the API's JSON form (exposed for the server's transport-level errors).
response error_response(int status, std::string_view code, std::string_view message, unsigned version, bool keep_alive);

// Whether a request path's segments match `pattern`, segment for segment, "*" matching any one segment.
bool path_matches(const std::vector<std::string>& parts, std::initializer_list<std::string_view> pattern);

}  // namespace rnx::service
