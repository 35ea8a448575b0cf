// The server's admission rules without sockets, on an injected clock: the unauthenticated pool evicts the connection
// that has waited longest; the reserve is bounded and capped per token and per project; the token is checked on every
// request (a revoked one is refused and closed); kept-alive connections idle past the limit are closed. Counts only.
#include "rnx/service/admission.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

using rnx::service::admission_limits;
using rnx::service::connection_admission;
using rnx::service::credential;
using rnx::service::credential_state;
using rnx::service::request_admission;
using namespace std::chrono_literals;

namespace {

// A clock that moves only when the test says so.
struct manual_clock {
  connection_admission::clock::time_point now{};
  connection_admission::clock_fn fn() {
    return [this] { return now; };
  }
};

std::vector<connection_admission::ticket> admit_all(connection_admission& a, int n, const std::string& from = "a") {
  std::vector<connection_admission::ticket> out;
  for (int i = 0; i < n; ++i) {
    auto d = a.admit(from);
    REQUIRE(d.admitted);
    REQUIRE_FALSE(d.evict);
    out.push_back(d.id);
  }
  return out;
}

credential token(std::int64_t token_id, std::int64_t project_id) {
  return {credential_state::valid, token_id, project_id};
}

// One complete request with `who`'s credentials on connection `t`, and the connection waiting again after it.
request_admission request(connection_admission& a, connection_admission::ticket t, const credential& who) {
  a.answering(t);
  auto what = a.present(t, who);
  if (!closes_connection(what)) a.waiting(t);
  return what;
}

admission_limits limits(std::size_t max_connections, std::size_t max_unauthenticated) {
  admission_limits l;
  l.max_connections = max_connections;
  l.max_unauthenticated_connections = max_unauthenticated;
  l.max_connections_per_address = 1000;
  return l;
}

}  // namespace

TEST_CASE("admission: a full unauthenticated pool evicts the connection waiting longest, never refuses a newcomer") {
  connection_admission a(limits(10, 4));
  auto first = admit_all(a, 4);
  CHECK(a.unauthenticated() == 4);
  auto d = a.admit("a");
  CHECK(d.admitted);
  REQUIRE(d.evict);
  CHECK(*d.evict == first[0]);
  CHECK(a.unauthenticated() == 4);  // the evicted one stopped counting at once
  // Its close, when the session ends, changes nothing more.
  a.closed(first[0]);
  CHECK(a.unauthenticated() == 4);
  // The next newcomer evicts the next oldest: a slow header cannot outlive the pool's size in newer arrivals.
  CHECK(a.admit("a").evict == first[1]);
}

TEST_CASE("admission: waiting again for the next request goes to the back of the line") {
  connection_admission a(limits(10, 3));
  auto t = admit_all(a, 3);
  // The oldest was answered (a keep-alive client without a token) and waits for its next request: now the newest.
  CHECK(request(a, t[0], {}) == request_admission::answer);
  CHECK(a.admit("a").evict == t[1]);
}

TEST_CASE("admission: a connection being answered is not evicted; with every one busy the newcomer is refused") {
  connection_admission a(limits(10, 2));
  auto t = admit_all(a, 2);
  a.answering(t[0]);
  CHECK(a.admit("a").evict == t[1]);
  // The whole server busy: 4 places, every one answering.
  connection_admission busy(limits(4, 2));
  std::vector<connection_admission::ticket> b;
  for (int i = 0; i < 4; ++i) {
    b.push_back(admit_all(busy, 1)[0]);
    busy.answering(b.back());
  }
  auto refused = busy.admit("a");
  CHECK_FALSE(refused.admitted);
  CHECK(refused.refused == connection_admission::refusal::full);
  CHECK_FALSE(refused.evict);
  CHECK(busy.unauthenticated() == 4);
  // One finishes and closes: room again.
  busy.closed(b[0]);
  CHECK(busy.admit("a").admitted);
}

TEST_CASE("admission: a full pool of connections being answered lends the newcomer a place the reserve does not use") {
  // A burst: every unauthenticated place holds a request queued for the request threads, nothing waits to give way.
  connection_admission a(limits(6, 2));
  auto t = admit_all(a, 2);
  for (auto id : t) a.answering(id);
  CHECK(request(a, t[0], token(1, 1)) == request_admission::answer);  // one held: the reserve has 3 places left
  a.answering(t[0]);
  auto lent = admit_all(a, 1);  // the pool has 1 again after the hold
  a.answering(lent[0]);
  for (int i = 0; i < 3; ++i) {
    auto d = a.admit("probe");
    CHECK(d.admitted);  // lent from the reserve's free places
    CHECK_FALSE(d.evict);
    a.answering(d.id);
  }
  CHECK(a.unauthenticated() == 5);
  CHECK(a.held() + a.unauthenticated() == 6);
  CHECK(a.admit("probe").refused == connection_admission::refusal::full);  // the whole server is full
  // Once one of the lent ones waits again, the pool is over its size: the next newcomer evicts it.
  a.waiting(lent[0]);
  auto d = a.admit("probe");
  CHECK(d.evict == lent[0]);
}

TEST_CASE("admission: an address at its cap is refused before it evicts anyone; its slots come back on close") {
  admission_limits l = limits(100, 50);
  l.max_connections_per_address = 3;
  connection_admission a(l);
  auto t = admit_all(a, 3, "127.0.0.2");
  auto over = a.admit("127.0.0.2");
  CHECK_FALSE(over.admitted);
  CHECK(over.refused == connection_admission::refusal::address_limit);
  CHECK(a.admit("127.0.0.3").admitted);  // another address is not touched
  a.closed(t[0]);
  CHECK(a.admit("127.0.0.2").admitted);
}

TEST_CASE("admission: a connection with a valid token is held in the reserve, never evicted, and frees its place") {
  connection_admission a(limits(4, 2));
  auto t = admit_all(a, 2);
  CHECK(request(a, t[0], token(1, 1)) == request_admission::answer);  // idle between its requests: not evictable
  CHECK(a.unauthenticated() == 1);
  CHECK(a.held() == 1);
  CHECK(a.held_by_token(1) == 1);
  CHECK(a.held_by_project(1) == 1);
  auto n = a.admit("a");  // the unauthenticated pool has a free place again
  CHECK(n.admitted);
  CHECK_FALSE(n.evict);
  auto m = a.admit("a");  // full: the oldest unauthenticated one goes, never t[0]
  REQUIRE(m.evict);
  CHECK(*m.evict == t[1]);
  a.closed(t[0]);
  CHECK(a.held() == 0);
  CHECK(a.held_by_token(1) == 0);
  CHECK(a.held_by_project(1) == 0);
}

TEST_CASE("admission: the reserve is bounded: once full, a valid token is answered from the unauthenticated pool") {
  // 6 connections, 3 of them unauthenticated: a reserve of 3.
  connection_admission a(limits(6, 3));
  std::vector<connection_admission::ticket> held;
  for (std::int64_t project = 1; project <= 3; ++project) {
    auto t = a.admit("a").id;
    CHECK(request(a, t, token(project, project)) == request_admission::answer);
    held.push_back(t);
  }
  CHECK(a.held() == 3);
  // A fourth project's client is answered, but not held: it stays evictable, and the pool for newcomers stays whole.
  auto fourth = a.admit("a").id;
  CHECK(request(a, fourth, token(4, 4)) == request_admission::answer);
  CHECK(a.held() == 3);
  CHECK(a.unauthenticated() == 1);
  admit_all(a, 2);
  CHECK(a.admit("a").evict == fourth);
  // Newcomers (a health probe) always get in: every held connection together never takes more than the reserve.
  for (int i = 0; i < 20; ++i) CHECK(a.admit("b").admitted);
  CHECK(a.held() + a.unauthenticated() <= 6);
}

TEST_CASE("admission: connections per token and per project are capped: one more is refused with 429 and closed") {
  admission_limits l = limits(100, 50);
  l.max_connections_per_token = 2;
  l.max_connections_per_project = 3;
  connection_admission a(l);
  auto t = admit_all(a, 6);
  CHECK(request(a, t[0], token(7, 1)) == request_admission::answer);
  CHECK(request(a, t[1], token(7, 1)) == request_admission::answer);
  CHECK(request(a, t[2], token(7, 1)) == request_admission::refuse_token_limit);
  CHECK(closes_connection(request_admission::refuse_token_limit));
  CHECK(a.held_by_token(7) == 2);
  // Another token of the same project: one more place, then the project's cap.
  CHECK(request(a, t[3], token(8, 1)) == request_admission::answer);
  CHECK(request(a, t[4], token(9, 1)) == request_admission::refuse_project_limit);
  CHECK(a.held_by_project(1) == 3);
  // Another project is not touched by the first one's caps.
  CHECK(request(a, t[5], token(20, 2)) == request_admission::answer);
  CHECK(a.held_by_project(2) == 1);
  // The refused ones are closed by the server; a held one closing frees a place under its token.
  a.closed(t[2]);
  a.closed(t[4]);
  a.closed(t[0]);
  auto again = a.admit("a").id;
  CHECK(request(a, again, token(7, 1)) == request_admission::answer);
  CHECK(a.held_by_token(7) == 2);
  // The same connection repeating its token is not counted twice.
  for (int i = 0; i < 5; ++i) CHECK(request(a, again, token(7, 1)) == request_admission::answer);
  CHECK(a.held_by_token(7) == 2);
}

TEST_CASE("admission: the token is checked on every request: a revoked one is refused and its connection closed") {
  connection_admission a(limits(10, 5));
  auto t = admit_all(a, 3);
  for (auto id : t) CHECK(request(a, id, token(1, 1)) == request_admission::answer);
  CHECK(a.held_by_token(1) == 3);
  // Revoked (or expired): the store now reads the token as not valid. Each held connection's next request is
  // refused, 401, and the connection closed.
  credential revoked{credential_state::invalid, 0, 0};
  CHECK(request(a, t[0], revoked) == request_admission::refuse_token_not_valid);
  CHECK(closes_connection(request_admission::refuse_token_not_valid));
  a.closed(t[0]);
  CHECK(a.held_by_token(1) == 2);
  // A held connection that stops sending its token is answered, then closed: no place kept without one.
  CHECK(request(a, t[1], {}) == request_admission::answer_then_close);
  a.closed(t[1]);
  // A connection never held that sends a token that is not valid is answered as the API answers it, then closed.
  auto fresh = a.admit("a").id;
  CHECK(request(a, fresh, revoked) == request_admission::answer_then_close);
  a.closed(fresh);
  // Changing tokens on a held connection moves its place to the new token.
  CHECK(request(a, t[2], token(2, 1)) == request_admission::answer);
  CHECK(a.held_by_token(1) == 0);
  CHECK(a.held_by_token(2) == 1);
  CHECK(a.held() == 1);
}

TEST_CASE("admission: a kept-alive connection idle past the limit is released (held or not); a new one is not") {
  manual_clock clock;
  admission_limits l = limits(10, 5);
  l.idle_timeout = 5s;
  connection_admission a(l, clock.fn());
  auto t = admit_all(a, 3);
  CHECK(request(a, t[0], token(1, 1)) == request_admission::answer);  // held, then idle
  CHECK(request(a, t[1], {}) == request_admission::answer);           // unauthenticated, then idle
  // t[2] never sent a request: the header timeout is its limit, not this one.
  clock.now += 5s;
  CHECK(a.idle_expired().empty());  // at the limit, not past it
  clock.now += 1ms;
  auto expired = a.idle_expired();
  REQUIRE(expired.size() == 2);
  CHECK(std::count(expired.begin(), expired.end(), t[0]) == 1);
  CHECK(std::count(expired.begin(), expired.end(), t[1]) == 1);
  CHECK(a.held() == 0);
  CHECK(a.unauthenticated() == 1);
  CHECK(a.idle_expired().empty());  // released once
  a.closed(t[0]);                   // the session's end afterwards changes nothing
  CHECK(a.unauthenticated() == 1);
  // A request keeps a connection alive: the idle time counts from its answer.
  auto u = a.admit("a").id;
  CHECK(request(a, u, token(1, 1)) == request_admission::answer);
  clock.now += 4s;
  CHECK(request(a, u, token(1, 1)) == request_admission::answer);
  clock.now += 4s;
  CHECK(a.idle_expired().empty());
  // While it is being answered it is not idle, however long that takes.
  a.answering(u);
  clock.now += 60s;
  CHECK(a.idle_expired().empty());
}

TEST_CASE("admission: the flood of one token holder: 512 connections from 8 addresses leave the others their room") {
  // rnx-server's defaults: 512 connections, 256 unauthenticated, 64 per address, 32 per token, 64 per project.
  connection_admission a(admission_limits{});
  int answered = 0;
  int refused = 0;
  for (int address = 0; address < 8; ++address) {
    for (int i = 0; i < 64; ++i) {
      auto d = a.admit("127.0.0." + std::to_string(2 + address));
      REQUIRE(d.admitted);
      auto what = request(a, d.id, token(1, 1));
      if (closes_connection(what)) {
        CHECK(what == request_admission::refuse_token_limit);
        a.closed(d.id);
        ++refused;
      } else {
        ++answered;
      }
    }
  }
  CHECK(answered == 32);
  CHECK(refused == 512 - 32);
  CHECK(a.held() == 32);
  // Another project's client and a health probe get in and are held or answered, round after round.
  for (int round = 0; round < 100; ++round) {
    auto probe = a.admit("127.0.0.200");
    REQUIRE(probe.admitted);
    CHECK(request(a, probe.id, {}) == request_admission::answer);
    a.closed(probe.id);
    auto other = a.admit("127.0.0.201");
    REQUIRE(other.admitted);
    CHECK(request(a, other.id, token(2, 2)) == request_admission::answer);
    a.closed(other.id);
  }
  // The same token holder with every one of its tokens of one project: at most the project's cap.
  for (std::int64_t extra = 100; extra < 200; ++extra) {
    auto d = a.admit("127.0.0." + std::to_string(10 + extra % 8));
    if (!d.admitted) continue;  // its addresses' caps
    if (closes_connection(request(a, d.id, token(extra, 1)))) a.closed(d.id);
  }
  CHECK(a.held_by_project(1) == 64);
  CHECK(a.held() <= admission_limits{}.reserve());
}

TEST_CASE("admission: a request that closes its connection after the answer takes no place, so no cap refuses it") {
  admission_limits l = limits(100, 50);
  l.max_connections_per_token = 1;
  connection_admission a(l);
  auto t = admit_all(a, 3);
  CHECK(request(a, t[0], token(1, 1)) == request_admission::answer);
  CHECK(request(a, t[1], token(1, 1)) == request_admission::refuse_token_limit);
  a.answering(t[2]);
  CHECK(a.present(t[2], token(1, 1), false) == request_admission::answer);
  CHECK(a.held_by_token(1) == 1);
}
