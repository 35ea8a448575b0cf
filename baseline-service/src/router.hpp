// The one routing table of rnx-server: method and path pattern to handler, for the API, the pages, the JSON behind
// their charts and the assets; every refusal (no route, wrong method, unknown or repeated query parameter, a
// malformed target) is worded here once and answered as JSON or as an HTML page, as the route's form says.
#pragma once

#include "rnx/service/api.hpp"

#include <boost/beast/http/verb.hpp>
#include <boost/json/value.hpp>

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::service {

// How a route answers, errors included: {"error": {"code", "message"}} JSON, or an HTML page for people.
enum class answer_form { json, html };

// What a handler gets: the request, its decoded path segments, the segments its pattern names ({id} -> "id") and
// its query (each key once).
struct route_call {
  const request& req;
  std::vector<std::string> parts;
  std::map<std::string, std::string> query;
  std::map<std::string, std::string, std::less<>> params;
  // The segment the route's pattern names `name`; throws rnx::error(internal) for a name the pattern lacks.
  const std::string& param(std::string_view name) const;
};

using route_handler = std::function<response(const route_call&)>;

struct route {
  std::string pattern;  // "/api/v1/runs/{id}": a {name} segment matches any one segment; also the metrics' label
  std::vector<boost::beast::http::verb> methods;
  std::vector<std::string> query_keys;  // the query parameters it takes; any other is refused (400)
  answer_form form = answer_form::json;
  route_handler handle;
};

class router {
 public:
  void add(route r);
  // The answer to `req`. `route_name` gets the pattern of the route taken ("page" for a page address that matches
  // none, "unmatched" otherwise). rnx::error becomes the answer in the route's form; other exceptions propagate.
  response dispatch(const request& req, std::string& route_name) const;

 private:
  struct entry {
    route r;
    std::vector<std::string> segments;  // of the pattern, a {name} segment as written
  };
  const entry* find(const std::vector<std::string>& parts) const;
  std::vector<entry> routes_;
};

// The token a request carries: "Authorization: Bearer T", else the rnx_token cookie the sign-in sets; "" when neither.
std::string request_token(const request& req);

// What a caller who presented an expired token is told: when it ended and the command that makes a new token for its
// project ("expired at T (its rotation's grace period ended); make a new one with `...`"). Only ever said to the
// holder of that token (store::database::find_expired).
std::string expired_token_text(const store::expired_token& t);

// A JSON answer (no caching) and an HTML answer (no caching, the pages' Content-Security-Policy).
response json_answer(int status, const boost::json::value& body, const request& req);
response html_answer(int status, std::string body, const request& req);

// The error answer in `form`: JSON (the API's, with WWW-Authenticate on 401) or the HTML error page.
response error_answer(answer_form form, int status, std::string_view code, std::string_view message,
                      const request& req);

}  // namespace rnx::service
