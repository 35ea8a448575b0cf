// The HTTP client's network failures: each common cause named in plain words with the URL (http/src/client.cpp).
#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"

#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <thread>

namespace {

// A loopback listener that answers one connection with `reply` (after reading what the client sent first), then
// closes it: a plain-HTTP server's 400 to a TLS hello, or "" for a server that hangs up without an answer.
class one_answer_server {
 public:
  explicit one_answer_server(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~one_answer_server() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  int port() const { return port_; }

 private:
  void serve() {
    const int client = ::accept(fd_, nullptr, nullptr);
    if (client < 0) return;
    char buffer[4096];
    if (::recv(client, buffer, sizeof buffer, 0) > 0 && !reply_.empty()) {
      ::send(client, reply_.data(), reply_.size(), MSG_NOSIGNAL);
    }
    ::close(client);
  }

  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
};

// A port nothing listens on: bound, then closed.
int closed_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

std::string failure_of(const std::string& url) {
  try {
    rnx::http::request("GET", url);
  } catch (const rnx::error& e) {
    CHECK(e.code() == rnx::errc::unavailable);
    return e.what();
  }
  FAIL("the request to " << url << " succeeded");
  return "";
}

}  // namespace

TEST_CASE("http client: a refused connection says that nothing listens there") {
  const std::string where = "127.0.0.1:" + std::to_string(closed_port());
  CHECK(failure_of("http://" + where + "/healthz") ==
        "GET http://" + where + "/healthz: connection refused: nothing listens on " + where);
}

TEST_CASE("http client: a name under .invalid does not resolve, answered without the network (RFC 6761)") {
  CHECK(failure_of("http://rnx-server.invalid:8722/healthz") ==
        "GET http://rnx-server.invalid:8722/healthz: the host name rnx-server.invalid does not resolve (is it "
        "spelled right?)");
  CHECK(failure_of("https://Baselines.Example.INVALID./x").find("does not resolve") != std::string::npos);
}

TEST_CASE("http client: https:// against a plain-HTTP server says the server speaks HTTP") {
  one_answer_server plain("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  const std::string where = "127.0.0.1:" + std::to_string(plain.port());
  CHECK(failure_of("https://" + where + "/healthz") ==
        "GET https://" + where + "/healthz: the server at " + where +
            " speaks HTTP, not HTTPS (its answer to the TLS handshake was not TLS): write the URL with http://");
}

TEST_CASE("http client: a server that hangs up without an answer suggests https://") {
  one_answer_server silent("");
  const std::string where = "127.0.0.1:" + std::to_string(silent.port());
  CHECK(failure_of("http://" + where + "/healthz") ==
        "GET http://" + where + "/healthz: the server at " + where +
            " closed the connection without an HTTP answer (if it serves HTTPS, write the URL with https://)");
}
