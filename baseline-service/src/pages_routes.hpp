// The routes of the pages (HTML), their JSON endpoints and assets; api::route hands them every request first.
#pragma once

#include "rnx/service/api.hpp"
#include "rnx/service/store.hpp"

#include <optional>
#include <string>

namespace rnx::service {

class page_routes {
 public:
  explicit page_routes(store::database& db) : db_(db) {}

  // nullopt when the request is for none of these routes; otherwise the answer, errors included (HTML for pages,
  // {"error": ...} JSON for the /api/v1 endpoints). `route` gets the route template for the metrics.
  std::optional<response> handle(const request& req, std::string& route);

 private:
  struct call;
  response dispatch(call& c);
  store::project_info readable_project(const call& c, const std::string& name);
  void check_readable(const call& c, const store::project_info& project);
  response login(call& c);

  store::database& db_;
};

}  // namespace rnx::service
