// A small synchronous HTTP/1.1 client (plain TCP or TLS with peer verification) over Boost.Beast.
//
//   auto r = rnx::http::request("POST", "https://api.github.com/repos/o/r/statuses/sha",
//                               {{"Authorization", "Bearer " + token}, {"Content-Type", "application/json"}},
//                               body, std::chrono::seconds(10));
//   if (r.status / 100 != 2) ...;   // r.body, r.header("Location")
//
// Network failures (DNS, refused, timeout, TLS verification) throw rnx::error(unavailable) naming the
// URL and the cause in plain words ("METHOD URL: connection refused: nothing listens on 127.0.0.1:1", "... the host
// name X does not resolve ...", "... speaks HTTP, not HTTPS ..."); a malformed URL throws rnx::error(usage). HTTP
// error statuses are returned, not thrown. A host under the reserved top-level domain .invalid (RFC 6761) fails
// to resolve at once, without asking the network.
#pragma once

#include "rnx/common/error.hpp"

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rnx::http {

using header_list = std::vector<std::pair<std::string, std::string>>;

struct response {
  int status = 0;
  header_list headers;
  std::string body;
  // The first header of that name (case-insensitive), or "".
  std::string header(std::string_view name) const;
};

// A request that got no HTTP answer (errc::unavailable): what() is "METHOD URL: CAUSE", and the parts are kept for a
// caller that words the failure its own way ("cannot reach the service at URL: CAUSE").
class request_failure : public rnx::error {
 public:
  request_failure(const std::string& method, std::string target_url, std::string plain_cause)
      : error(errc::unavailable, method + " " + target_url + ": " + plain_cause),
        url_(std::move(target_url)),
        cause_(std::move(plain_cause)) {}
  const std::string& url() const noexcept { return url_; }
  // In plain words where the cause is a common one (refused, no such host, HTTP spoken to an https:// URL, ...).
  const std::string& cause() const noexcept { return cause_; }

 private:
  std::string url_;
  std::string cause_;
};

struct request_options {
  // Applies to each phase separately: resolve+connect, TLS handshake, write, read.
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  bool verify_peer = true;  // off only for tests against self-signed servers
  std::string ca_file;      // extra trusted CA bundle (PEM); empty = the system store
  std::size_t max_body = 64u << 20;
};

response request(std::string_view method, std::string_view url, const header_list& headers, std::string_view body,
                 const request_options& options);

inline response request(std::string_view method, std::string_view url, const header_list& headers = {},
                        std::string_view body = {}, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  request_options options;
  options.timeout = timeout;
  return request(method, url, headers, body, options);
}

}  // namespace rnx::http
