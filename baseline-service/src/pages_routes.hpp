// The routes of the pages (HTML), their JSON endpoints and assets, added to the server's one routing table.
#pragma once

#include "router.hpp"

#include "rnx/service/api.hpp"
#include "rnx/service/store.hpp"

#include <functional>
#include <optional>
#include <string>

namespace rnx::service {

class page_routes {
 public:
  explicit page_routes(store::database& db) : db_(db) {}

  // Adds the pages, their JSON endpoints (under /api/v1), the assets and /login to the server's routing table.
  void add_routes(router& r);

 private:
  response landing(const route_call& c);
  response asset(const route_call& c);
  response login(const route_call& c);
  response overview(const route_call& c, answer_form form);
  response config_history(const route_call& c, answer_form form);
  response run_evidence(const route_call& c, answer_form form);
  response compare(const route_call& c, answer_form form);
  store::project_info readable_project(const route_call& c, const std::string& name);
  bool may_read(const route_call& c, const store::project_info& project);
  void check_run_readable(const route_call& c, std::int64_t id);
  std::string expired_note(const route_call& c);
  // `page()`, or the HTML page of the error it threw, with links back to where this address came from
  // (pages::ways_back: the project's overview, the runs of a refused comparison).
  response with_ways_back(const route_call& c, const std::function<response()>& page);

  store::database& db_;
};

}  // namespace rnx::service
