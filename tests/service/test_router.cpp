// The one routing table: a handler is given its pattern's {name} segments by name (never by position), decoded;
// a route without the name asked for is a programming error (500), not another segment's value.
#include "router.hpp"

#include <doctest/doctest.h>

#include <boost/json.hpp>

#include <string>

namespace {

namespace bhttp = boost::beast::http;
using rnx::service::answer_form;
using rnx::service::route_call;

rnx::service::request get(const std::string& target, unsigned version = 11) {
  rnx::service::request req{bhttp::verb::get, target, version};
  return req;
}

// Answers the named segments it is asked for as a JSON object.
rnx::service::route_handler echo(std::vector<std::string> names) {
  return [names](const route_call& c) {
    boost::json::object o;
    for (const auto& n : names) o[n] = c.param(n);
    return rnx::service::json_answer(200, o, c.req);
  };
}

rnx::service::router table() {
  rnx::service::router r;
  r.add({"/api/v1/projects/{project}/groups/{group}",
         {bhttp::verb::get},
         {},
         answer_form::json,
         echo({"project", "group"})});
  r.add({"/runs/{id}", {bhttp::verb::get}, {}, answer_form::json, echo({"id"})});
  r.add({"/runs/{id}/wrong", {bhttp::verb::get}, {}, answer_form::json, echo({"project"})});
  return r;
}

}  // namespace

TEST_CASE("a handler reads its pattern's segments by name, decoded") {
  const auto r = table();
  std::string route;
  auto res = r.dispatch(get("/api/v1/projects/my%20proj/groups/g-7"), route);
  CHECK(res.result_int() == 200);
  CHECK(route == "/api/v1/projects/{project}/groups/{group}");
  CHECK(res.body() == R"({"project":"my proj","group":"g-7"})"
                      "\n");

  res = r.dispatch(get("/runs/42", 10), route);
  CHECK(res.result_int() == 200);
  CHECK(res.version() == 10);
  CHECK(res.body() == R"({"id":"42"})"
                      "\n");
}

TEST_CASE("a name the route's pattern lacks is the server's error, never another segment") {
  const auto r = table();
  std::string route;
  const auto res = r.dispatch(get("/runs/42/wrong"), route);
  CHECK(res.result_int() == 500);
  CHECK(res.body().find("the route has no {project} segment") != std::string::npos);
}

TEST_CASE("a literal segment is matched as written; one that differs finds no route") {
  const auto r = table();
  std::string route;
  const auto res = r.dispatch(get("/api/v1/projects/p/grupos/g"), route);
  CHECK(res.result_int() == 404);
  CHECK(res.body().find(R"("code":"not_found")") != std::string::npos);
}
