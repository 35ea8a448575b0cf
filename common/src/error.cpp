// Names, exit codes and HTTP statuses of rnx::errc.
#include "rnx/common/error.hpp"

namespace rnx {

std::string_view errc_name(errc code) noexcept {
  switch (code) {
    case errc::usage: return "usage";
    case errc::bad_input: return "bad_input";
    case errc::invalid: return "invalid";
    case errc::not_found: return "not_found";
    case errc::conflict: return "conflict";
    case errc::unauthorized: return "unauthorized";
    case errc::forbidden: return "forbidden";
    case errc::too_large: return "too_large";
    case errc::unavailable: return "unavailable";
    case errc::kernel_failed: return "kernel_failed";
    case errc::internal: return "internal";
  }
  return "internal";
}

std::optional<errc> errc_from_name(std::string_view name) noexcept {
  for (errc c : {errc::usage, errc::bad_input, errc::invalid, errc::not_found, errc::conflict, errc::unauthorized,
                 errc::forbidden, errc::too_large, errc::unavailable, errc::kernel_failed, errc::internal}) {
    if (errc_name(c) == name) return c;
  }
  return std::nullopt;
}

int errc_exit_code(errc code) noexcept { return code == errc::internal ? 3 : 2; }

int errc_http_status(errc code) noexcept {
  switch (code) {
    case errc::usage:
    case errc::bad_input: return 400;
    case errc::unauthorized: return 401;
    case errc::forbidden: return 403;
    case errc::not_found: return 404;
    case errc::conflict: return 409;
    case errc::too_large: return 413;
    case errc::invalid:
    case errc::kernel_failed: return 422;
    case errc::unavailable: return 503;
    case errc::internal: return 500;
  }
  return 500;
}

boost::json::object error::to_json() const {
  boost::json::object inner;
  inner["code"] = errc_name(code_);
  inner["message"] = what();
  boost::json::object outer;
  outer["error"] = std::move(inner);
  return outer;
}

}  // namespace rnx
