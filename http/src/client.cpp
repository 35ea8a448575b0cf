// The synchronous HTTP/1.1 client: one private io_context per call, every phase under a deadline.
#include "rnx/http/client.hpp"

#include "rnx/common/error.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace rnx::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;

std::string response::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (key.size() == name.size() && std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return {};
}

namespace {

struct target {
  bool tls = false;
  std::string host;
  std::string port;
  std::string path;  // origin-form: path and query
};

target parse_url(std::string_view url) {
  auto parsed = boost::urls::parse_absolute_uri(url);
  if (!parsed) {
    throw error(errc::usage, "\"" + std::string(url) + "\" is not a valid URL (" + parsed.error().message() +
                                 "); write it as http://host:port/path or https://host/path");
  }
  target t;
  std::string scheme(parsed->scheme());
  if (scheme == "https") {
    t.tls = true;
  } else if (scheme != "http") {
    throw error(errc::usage, "\"" + std::string(url) + "\": only http:// and https:// URLs are supported");
  }
  t.host = std::string(parsed->encoded_host());
  if (t.host.empty()) throw error(errc::usage, "\"" + std::string(url) + "\" names no host");
  // Bracketed IPv6 literals are resolved without the brackets.
  if (t.host.front() == '[' && t.host.back() == ']') t.host = t.host.substr(1, t.host.size() - 2);
  t.port = parsed->has_port() ? std::string(parsed->port()) : (t.tls ? "443" : "80");
  t.path = std::string(parsed->encoded_path());
  if (t.path.empty()) t.path = "/";
  if (parsed->has_query()) t.path += "?" + std::string(parsed->encoded_query());
  return t;
}

// RFC 6761 reserves the top-level domain "invalid": no name under it ever resolves, so it is answered here, at once
// and without the network, as a resolver would answer an unknown name.
bool reserved_invalid_name(std::string_view host) {
  std::string lower(host);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!lower.empty() && lower.back() == '.') lower.pop_back();
  constexpr std::string_view tld = ".invalid";
  return lower == "invalid" ||
         (lower.size() > tld.size() && lower.compare(lower.size() - tld.size(), tld.size(), tld) == 0);
}

// The one place a network failure becomes words: the common causes say what happened in plain terms (and what a
// user can check), anything else keeps the system's own message.
std::string failure_words(const beast::error_code& ec, const target& t, const request_options& options) {
  const std::string where = t.host + ":" + t.port;
  if (ec == beast::error::timeout) {
    return "timed out after " + std::to_string(options.timeout.count()) + " ms (" + where + " did not answer)";
  }
  if (ec == bhttp::error::body_limit) return "response body over " + std::to_string(options.max_body) + " bytes";
  if (ec == asio::error::connection_refused) return "connection refused: nothing listens on " + where;
  if (ec == asio::error::host_not_found || ec == asio::error::host_not_found_try_again || ec == asio::error::no_data) {
    return "the host name " + t.host + " does not resolve (is it spelled right?)";
  }
  if (ec == asio::error::network_unreachable || ec == asio::error::host_unreachable) {
    return "no route to " + where + " (" + ec.message() + ")";
  }
  if (ec.category() == asio::error::get_ssl_category()) {
    const int reason = ERR_GET_REASON(static_cast<unsigned long>(ec.value()));
    if (reason == SSL_R_WRONG_VERSION_NUMBER) {
      return "the server at " + where +
             " speaks HTTP, not HTTPS (its answer to the TLS handshake was not TLS): " + "write the URL with http://";
    }
    if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) {
      return "the server's TLS certificate is not trusted here (issued by an authority this machine does not "
             "trust, expired, or for another host name than " +
             t.host + ")";
    }
  }
  if (!t.tls && (ec == bhttp::error::end_of_stream || ec == asio::error::connection_reset || ec == asio::error::eof ||
                 ec == bhttp::error::bad_version)) {
    return "the server at " + where + " closed the connection without an HTTP answer (if it serves HTTPS, write " +
           "the URL with https://)";
  }
  return ec.message();
}

// Runs one asynchronous phase to completion on the call's private io_context and throws its error.
// Phases are sequential, so plain callbacks keep this simple (and clear of compiler bugs with
// coroutines under sanitizers); beast::tcp_stream's expiry turns a stalled phase into error::timeout.
template <class Start>
void run_phase(asio::io_context& ioc, Start&& start) {
  beast::error_code result;
  start([&result](beast::error_code ec, auto&&...) { result = ec; });
  ioc.restart();
  ioc.run();
  if (result) throw boost::system::system_error(result);
}

template <class Stream>
response exchange(asio::io_context& ioc, Stream& stream, beast::tcp_stream& lowest,
                  bhttp::request<bhttp::string_body>& req, const request_options& options) {
  lowest.expires_after(options.timeout);
  run_phase(ioc, [&](auto handler) { bhttp::async_write(stream, req, std::move(handler)); });
  beast::flat_buffer buffer;
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(options.max_body);
  lowest.expires_after(options.timeout);
  run_phase(ioc, [&](auto handler) { bhttp::async_read(stream, buffer, parser, std::move(handler)); });
  auto msg = parser.release();
  response out;
  out.status = static_cast<int>(msg.result_int());
  for (const auto& field : msg) out.headers.emplace_back(std::string(field.name_string()), std::string(field.value()));
  out.body = std::move(msg.body());
  return out;
}

response run_request(asio::io_context& ioc, const target& t, bhttp::request<bhttp::string_body>& req,
                     const request_options& options, asio::ssl::context* tls) {
  if (reserved_invalid_name(t.host)) throw boost::system::system_error(asio::error::host_not_found);
  tcp::resolver resolver(ioc);
  tcp::resolver::results_type endpoints;
  {
    // Resolution has no stream to carry a deadline, so a timer cancels it.
    asio::steady_timer deadline(ioc, options.timeout);
    deadline.async_wait([&resolver](beast::error_code ec) {
      if (!ec) resolver.cancel();
    });
    beast::error_code result;
    resolver.async_resolve(t.host, t.port, [&](beast::error_code ec, tcp::resolver::results_type r) {
      result = ec;
      endpoints = std::move(r);
      deadline.cancel();
    });
    ioc.restart();
    ioc.run();
    if (result == asio::error::operation_aborted) result = beast::error::timeout;
    if (result) throw boost::system::system_error(result);
  }
  if (!tls) {
    beast::tcp_stream stream(ioc);
    stream.expires_after(options.timeout);
    run_phase(ioc, [&](auto handler) { stream.async_connect(endpoints, std::move(handler)); });
    auto out = exchange(ioc, stream, stream, req, options);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    return out;
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, *tls);
  // SNI, so virtual-hosted servers present the right certificate.
  if (!SSL_set_tlsext_host_name(stream.native_handle(), t.host.c_str())) {
    throw error(errc::unavailable, t.host + ": cannot set TLS server name");
  }
  if (options.verify_peer) stream.set_verify_callback(asio::ssl::host_name_verification(t.host));
  auto& lowest = beast::get_lowest_layer(stream);
  lowest.expires_after(options.timeout);
  run_phase(ioc, [&](auto handler) { lowest.async_connect(endpoints, std::move(handler)); });
  lowest.expires_after(options.timeout);
  run_phase(ioc, [&](auto handler) { stream.async_handshake(asio::ssl::stream_base::client, std::move(handler)); });
  auto out = exchange(ioc, stream, lowest, req, options);
  // A peer that skips close_notify is common and harmless once the whole message has arrived.
  lowest.expires_after(std::chrono::seconds(2));
  try {
    run_phase(ioc, [&](auto handler) { stream.async_shutdown(std::move(handler)); });
  } catch (const boost::system::system_error&) {
  }
  return out;
}

}  // namespace

response request(std::string_view method, std::string_view url, const header_list& headers, std::string_view body,
                 const request_options& options) {
  target t = parse_url(url);
  bhttp::request<bhttp::string_body> req;
  auto verb = bhttp::string_to_verb(method);
  if (verb == bhttp::verb::unknown) throw error(errc::usage, "unknown HTTP method \"" + std::string(method) + "\"");
  req.method(verb);
  req.target(t.path);
  req.version(11);
  bool default_port = t.port == (t.tls ? "443" : "80");
  req.set(bhttp::field::host, default_port ? t.host : t.host + ":" + t.port);
  req.set(bhttp::field::user_agent, "rnx/0.1");
  for (const auto& [name, value] : headers) req.set(name, value);
  req.body() = std::string(body);
  req.prepare_payload();
  req.keep_alive(false);

  std::optional<asio::ssl::context> tls;
  if (t.tls) {
    tls.emplace(asio::ssl::context::tls_client);
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1);
    if (options.verify_peer) {
      tls->set_verify_mode(asio::ssl::verify_peer);
      boost::system::error_code ec;
      if (!options.ca_file.empty()) {
        tls->load_verify_file(options.ca_file, ec);
        if (ec) throw error(errc::not_found, options.ca_file + ": cannot load CA bundle: " + ec.message());
      } else {
        tls->set_default_verify_paths(ec);
      }
    } else {
      tls->set_verify_mode(asio::ssl::verify_none);
    }
  }

  asio::io_context ioc;
  try {
    return run_request(ioc, t, req, options, tls ? &*tls : nullptr);
  } catch (const rnx::error&) {
    throw;
  } catch (const boost::system::system_error& e) {
    throw request_failure(std::string(method), std::string(url), failure_words(e.code(), t, options));
  } catch (const std::exception& e) {
    throw request_failure(std::string(method), std::string(url), e.what());
  }
}

}  // namespace rnx::http
