// The one error type of rnx: a kind (enum), a message for people, and its exit code / HTTP status.
#pragma once

#include <boost/json/object.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rnx {

enum class errc {
  usage,          // wrong flags or arguments: exit 2, HTTP 400
  bad_input,      // malformed file, document or request body: exit 2, HTTP 400
  invalid,        // well-formed but semantically wrong (schema, values): exit 2, HTTP 422
  not_found,      // missing file, run, project: exit 2, HTTP 404
  conflict,       // already exists / state clash: exit 2, HTTP 409
  unauthorized,   // missing or unknown token: HTTP 401
  forbidden,      // token of another project, no permission: HTTP 403
  too_large,      // body or file over its limit: HTTP 413
  unavailable,    // a remote service is unreachable or failing: HTTP 503
  kernel_failed,  // the user's kernel raised, crashed or hung
  internal,       // a bug in rnx: exit 3, HTTP 500
};

std::string_view errc_name(errc code) noexcept;
std::optional<errc> errc_from_name(std::string_view name) noexcept;  // errc_name's text back; else empty
int errc_exit_code(errc code) noexcept;
int errc_http_status(errc code) noexcept;

class error : public std::runtime_error {
 public:
  error(errc code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  errc code() const noexcept { return code_; }
  int exit_code() const noexcept { return errc_exit_code(code_); }
  int http_status() const noexcept { return errc_http_status(code_); }
  // {"error": {"code": "...", "message": "..."}} as the service API answers it.
  boost::json::object to_json() const;

 private:
  errc code_;
};

}  // namespace rnx
