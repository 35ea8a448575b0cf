// The real rnx-server under abuse (loopback only): a thousand half-sent requests from one address, a slowloris spread
// over nine, slow headers, and more requests without a token than the server takes at once. Every case asserts answers,
// never timings; each ends by itself (the server's own timeouts, and a bound on every wait here).
#include "service_test_support.hpp"

#include "rnx/http/client.hpp"

#include <doctest/doctest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>

#include <sys/resource.h>

#include <memory>

using namespace rnx;
namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Another loopback address for the attacker, so the client under test (127.0.0.1) is a different address.
constexpr const char* attacker_address = "127.0.0.2";

// A connection from `from` that sent `bytes` and then nothing more; closed (reset) when it goes out of scope.
tcp::socket half_open(asio::io_context& ioc, const char* from, unsigned short port, const std::string& bytes) {
  tcp::socket s(ioc);
  boost::system::error_code ec;
  s.open(tcp::v4(), ec);
  if (!ec) s.bind({asio::ip::make_address(from), 0}, ec);
  if (!ec) s.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
  // A connection the server closed at once (over a limit) may fail to take the bytes: that is the point.
  if (!ec) asio::write(s, asio::buffer(bytes), ec);
  return s;
}

void raise_descriptor_limit(rlim_t wanted) {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return;
  if (r.rlim_cur < wanted) {
    r.rlim_cur = std::min(wanted, r.rlim_max);
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

http::response call(const test::server_process& server, const std::string& method, const std::string& path,
                    const std::string& token, const std::string& body = "") {
  http::header_list headers{{"Content-Type", "application/json"}};
  if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
  return http::request(method, server.url(path), headers, body, std::chrono::seconds(20));
}

std::uint64_t metric(const std::string& text, const std::string& name) {
  auto at = text.find("\n" + name + " ");
  if (at == std::string::npos) return 0;
  return std::stoull(text.substr(at + name.size() + 2));
}

}  // namespace

TEST_CASE("abuse: 1000 half-sent requests from one address; health and uploads of another client are answered") {
  raise_descriptor_limit(4096);
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  test::server_process server(db);  // the default limits and timeouts

  {
    // The probe: is 127.0.0.2 usable here (it is on Linux's loopback)?
    asio::io_context probe_ioc;
    auto probe = half_open(probe_ioc, attacker_address, server.port(), "");
    REQUIRE_MESSAGE(probe.is_open(), "cannot bind 127.0.0.2 on loopback");
  }

  asio::io_context ioc;
  std::vector<tcp::socket> idle;
  idle.reserve(1000);
  const std::string partial = "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  for (int i = 0; i < 1000; ++i) idle.push_back(half_open(ioc, attacker_address, server.port(), partial));

  // While all of them are open, another client is served: health with and without a token, uploads, verdicts.
  for (int i = 0; i < 10; ++i) {
    auto health = call(server, "GET", "/healthz", token);
    CHECK_MESSAGE(health.status == 200, health.body);
    auto upload = call(server, "POST", "/api/v1/runs", token,
                       test::run_json({.branch = "feature",
                                       .pull_request = 4,
                                       .commit = "c" + std::to_string(i),
                                       .seed = static_cast<unsigned>(i + 1)}));
    CHECK_MESSAGE(upload.status == 201, upload.body);
  }
  CHECK(call(server, "GET", "/healthz", "").status == 200);

  // The server held at most its per-address limit of them and refused the rest at once.
  auto m = call(server, "GET", "/metrics", token);
  REQUIRE(m.status == 200);
  CHECK(metric(m.body, "rnx_refused_connections_total") >= 1000 - 64);
  CHECK(metric(m.body, "rnx_open_connections") <= 64 + 4);  // the attacker's 64, this request, closing ones
  CHECK(server.alive());
}

TEST_CASE("abuse: headers sent too slowly are cut off at --header-timeout") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  test::make_token(db, "demo");
  test::server_process server(db, {"--header-timeout", "1"});
  asio::io_context ioc;
  auto s = half_open(ioc, "127.0.0.1", server.port(), "GET /healthz HTTP/1.1\r\nHost: x\r\n");
  REQUIRE(s.is_open());
  // The server closes it: the read ends (EOF or reset) instead of waiting for ever. A bound of 20 s on this side.
  ::timeval tv{20, 0};
  setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char buf[256];
  ssize_t n = ::recv(s.native_handle(), buf, sizeof buf, 0);
  CHECK(n <= 0);
  if (n < 0) CHECK(errno != EAGAIN);  // not our own 20 s bound: the server ended it
}

TEST_CASE("abuse: requests without a token beyond --max-unauthenticated get 503; with a token they are answered") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  test::server_process server(db, {"--max-unauthenticated", "2", "--read-timeout", "30"});
  asio::io_context ioc;
  // Two requests without a token whose bodies never come: each holds an unauthenticated slot.
  const std::string stalled =
      "POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: "
      "100\r\n\r\n";
  auto a = half_open(ioc, "127.0.0.1", server.port(), stalled);
  auto b = half_open(ioc, "127.0.0.1", server.port(), stalled);
  REQUIRE(a.is_open());
  REQUIRE(b.is_open());
  // The server reads their headers asynchronously: wait until both hold their slot, asking with the token (a
  // request with one takes no slot, so the wait cannot take one of theirs).
  test::wait_until([&] {
    return call(server, "GET", "/metrics", token).body.find("\nrnx_unauthenticated_requests 2\n") != std::string::npos;
  });
  const std::string anonymous = "/api/v1/projects/demo/runs";  // 401 when a slot is free
  auto busy = call(server, "GET", anonymous, "");
  CHECK(busy.status == 503);
  CHECK(busy.header("Retry-After") == "1");
  CHECK(busy.body.find("too many requests without a token") != std::string::npos);
  // Requests with a token are not counted, nor is a health probe without one.
  CHECK(call(server, "GET", "/healthz", token).status == 200);
  CHECK(call(server, "GET", "/healthz", "").status == 200);
  auto m = call(server, "GET", "/metrics", token);
  CHECK(m.body.find("route=\"unauthenticated-limit\"") != std::string::npos);
  // The slots come back when the stalled requests end.
  a.close();
  b.close();
  test::wait_until([&] { return call(server, "GET", anonymous, "").status == 401; });
}

TEST_CASE("abuse: a slowloris from nine addresses over every cap; a tenth address's token and /healthz are answered") {
  raise_descriptor_limit(4096);
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  // Small limits so that few sockets go over all of them: 9 x 12 half-sent requests > 64 connections in all.
  test::server_process server(db, {"--max-connections", "64", "--max-unauthenticated-connections", "32",
                                   "--max-connections-per-address", "12"});
  const std::vector<std::string> attackers = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6",
                                              "127.0.0.7", "127.0.0.8", "127.0.0.9", "127.0.0.10"};
  const std::string partial = "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n";
  asio::io_context ioc;
  std::vector<tcp::socket> idle;
  auto flood = [&](int per_address) {
    for (const auto& from : attackers) {
      for (int i = 0; i < per_address; ++i) idle.push_back(half_open(ioc, from.c_str(), server.port(), partial));
    }
  };
  flood(12);  // 108 half-sent requests, more than the whole server holds
  for (int round = 0; round < 10; ++round) {
    flood(2);  // the flood goes on between the requests: every newcomer evicts an older one
    auto health = call(server, "GET", "/healthz", token);
    CHECK_MESSAGE(health.status == 200, health.body);
    auto upload = call(server, "POST", "/api/v1/runs", token,
                       test::run_json({.branch = "feature",
                                       .pull_request = 4,
                                       .commit = "c" + std::to_string(round),
                                       .seed = static_cast<unsigned>(round + 1)}));
    CHECK_MESSAGE(upload.status == 201, upload.body);
    CHECK(call(server, "GET", "/healthz", "").status == 200);  // a probe without a token too
  }
  auto m = call(server, "GET", "/metrics", token);
  REQUIRE(m.status == 200);
  // The unauthenticated pool was full the whole time: its oldest waiters made room for newcomers.
  CHECK(metric(m.body, "rnx_evicted_connections_total") >= 108 - 32);
  CHECK(metric(m.body, "rnx_open_connections") <= 64);
  CHECK(server.alive());
}

namespace {

// A kept-alive connection from `from` that sends GET requests and reads each response whole.
class keep_alive_connection {
 public:
  keep_alive_connection(asio::io_context& ioc, const char* from, unsigned short port)
      : socket_(half_open(ioc, from, port, "")) {}

  // The response to GET `target` with `token` (none when empty), or status 0 when the connection was closed first.
  boost::beast::http::response<boost::beast::http::string_body> get(const std::string& target,
                                                                    const std::string& token) {
    namespace bhttp = boost::beast::http;
    bhttp::request<bhttp::empty_body> req{bhttp::verb::get, target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    if (!token.empty()) req.set(bhttp::field::authorization, "Bearer " + token);
    bhttp::response<bhttp::string_body> res;
    boost::system::error_code ec;
    bhttp::write(socket_, req, ec);
    if (!ec) bhttp::read(socket_, buffer_, res, ec);
    if (ec) res.result(0);
    return res;
  }

  // Whether the server has closed the connection: reads until it does (bounded by the server's own timeouts).
  bool closed_by_server() {
    char byte = 0;
    boost::system::error_code ec;
    socket_.read_some(asio::buffer(&byte, 1), ec);
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  }

 private:
  tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace

TEST_CASE("abuse: the token is checked on every request: a revoked token's kept-alive connections get 401 and close") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  std::string other = test::make_token(db, "other", "upload");
  test::server_process server(db);
  asio::io_context ioc;
  std::vector<std::unique_ptr<keep_alive_connection>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<keep_alive_connection>(ioc, attacker_address, server.port()));
    REQUIRE(held.back()->get("/api/v1/projects/demo/token", token).result_int() == 200);
  }
  REQUIRE(held[0]->get("/api/v1/projects/demo/token", token).result_int() == 200);  // still open, still valid

  store::database(db).revoke_token(token);
  for (auto& c : held) {
    auto refused = c->get("/api/v1/projects/demo/token", token);
    CHECK(refused.result_int() == 401);
    CHECK_FALSE(refused.keep_alive());
    CHECK(refused.body().find("no longer valid") != std::string::npos);
    CHECK(c->closed_by_server());
  }
  // A held connection that drops its token does not keep its place either: answered, then closed.
  keep_alive_connection quiet(ioc, attacker_address, server.port());
  REQUIRE(quiet.get("/api/v1/projects/other/token", other).result_int() == 200);
  auto without = quiet.get("/healthz", "");
  CHECK(without.result_int() == 200);
  CHECK_FALSE(without.keep_alive());
  CHECK(quiet.closed_by_server());
  auto m = call(server, "GET", "/metrics", other);
  CHECK(m.body.find("route=\"token-not-valid\",method=\"GET\",status=\"401\"") != std::string::npos);
}

TEST_CASE("abuse: connections held per token and per project are capped: one more gets 429 with Retry-After") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  std::string second = test::make_token(db, "demo", "baseline");
  std::string other = test::make_token(db, "other", "upload");
  test::server_process server(db, {"--max-connections-per-token", "2", "--max-connections-per-project", "3"});
  asio::io_context ioc;
  std::vector<std::unique_ptr<keep_alive_connection>> held;
  auto open_with = [&](const std::string& t, const std::string& project) {
    held.push_back(std::make_unique<keep_alive_connection>(ioc, attacker_address, server.port()));
    return held.back()->get("/api/v1/projects/" + project + "/token", t);
  };
  CHECK(open_with(token, "demo").result_int() == 200);
  CHECK(open_with(token, "demo").result_int() == 200);
  auto over_token = open_with(token, "demo");
  CHECK(over_token.result_int() == 429);
  CHECK(over_token[boost::beast::http::field::retry_after] == "1");
  CHECK(over_token.body().find("--max-connections-per-token") != std::string::npos);
  CHECK(held.back()->closed_by_server());
  CHECK(open_with(second, "demo").result_int() == 200);  // the project's third
  auto over_project = open_with(second, "demo");
  CHECK(over_project.result_int() == 429);
  CHECK(over_project.body().find("--max-connections-per-project") != std::string::npos);
  CHECK(held.back()->closed_by_server());
  // Another project's client and a health probe are served, kept alive or not.
  CHECK(open_with(other, "other").result_int() == 200);
  CHECK(call(server, "GET", "/healthz", "").status == 200);
  CHECK(call(server, "GET", "/api/v1/projects/other/token", other).status == 200);
  // Once a held connection closes, its token has a place again.
  held[0].reset();
  test::wait_until([&] { return open_with(token, "demo").result_int() == 200; });
}

TEST_CASE("abuse: a kept-alive connection idle past --idle-timeout is closed, token or not") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  test::server_process server(db, {"--idle-timeout", "0.2", "--header-timeout", "60"});
  asio::io_context ioc;
  keep_alive_connection held(ioc, attacker_address, server.port());
  REQUIRE(held.get("/api/v1/projects/demo/token", token).result_int() == 200);
  keep_alive_connection anonymous(ioc, attacker_address, server.port());
  REQUIRE(anonymous.get("/healthz", "").result_int() == 200);
  // Both are closed by the idle limit, long before the header timeout of 60 s (the ctest TIMEOUT bounds the wait).
  CHECK(held.closed_by_server());
  CHECK(anonymous.closed_by_server());
  auto m = call(server, "GET", "/metrics", token);
  CHECK(metric(m.body, "rnx_idle_closed_connections_total") >= 2);
}
