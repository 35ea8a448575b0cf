// The server's connection pools without sockets: the unauthenticated pool evicts the connection that has waited
// longest, a connection being answered or authenticated is never evicted, and the reserve holds for tokens.
#include "rnx/service/admission.hpp"

#include <doctest/doctest.h>

#include <vector>

using rnx::service::admission_limits;
using rnx::service::connection_admission;

namespace {

std::vector<connection_admission::ticket> admit_all(connection_admission& a, int n) {
  std::vector<connection_admission::ticket> out;
  for (int i = 0; i < n; ++i) {
    auto d = a.admit();
    REQUIRE(d.admitted);
    REQUIRE_FALSE(d.evict);
    out.push_back(d.id);
  }
  return out;
}

}  // namespace

TEST_CASE("admission: a full unauthenticated pool evicts the connection waiting longest, never refuses a newcomer") {
  connection_admission a({.max_connections = 10, .max_unauthenticated_connections = 4});
  auto first = admit_all(a, 4);
  CHECK(a.unauthenticated() == 4);
  auto d = a.admit();
  CHECK(d.admitted);
  REQUIRE(d.evict);
  CHECK(*d.evict == first[0]);
  CHECK(a.unauthenticated() == 4);  // the evicted one stopped counting at once
  // Its close, when the session ends, changes nothing more.
  a.closed(first[0]);
  CHECK(a.unauthenticated() == 4);
  // The next newcomer evicts the next oldest: a slow header cannot outlive the pool's size in newer arrivals.
  CHECK(a.admit().evict == first[1]);
}

TEST_CASE("admission: waiting again for the next request goes to the back of the line") {
  connection_admission a({.max_connections = 10, .max_unauthenticated_connections = 3});
  auto t = admit_all(a, 3);
  // The oldest was answered (an unauthenticated keep-alive client) and waits for its next request: now the newest.
  a.answering(t[0]);
  a.waiting(t[0]);
  CHECK(a.admit().evict == t[1]);
}

TEST_CASE("admission: a connection being answered is not evicted; with every one busy the newcomer is refused") {
  connection_admission a({.max_connections = 10, .max_unauthenticated_connections = 2});
  auto t = admit_all(a, 2);
  a.answering(t[0]);
  CHECK(a.admit().evict == t[1]);
  connection_admission busy({.max_connections = 10, .max_unauthenticated_connections = 2});
  auto b = admit_all(busy, 2);
  busy.answering(b[0]);
  busy.answering(b[1]);
  auto refused = busy.admit();
  CHECK_FALSE(refused.admitted);
  CHECK_FALSE(refused.evict);
  CHECK(busy.unauthenticated() == 2);
  // One finishes and closes: room again.
  busy.closed(b[0]);
  CHECK(busy.admit().admitted);
}

TEST_CASE("admission: an authenticated connection moves to the reserve, is never evicted, and frees its place") {
  connection_admission a({.max_connections = 4, .max_unauthenticated_connections = 2});
  auto t = admit_all(a, 2);
  a.answering(t[0]);
  a.authenticated(t[0]);
  a.waiting(t[0]);  // idle between its requests: still not evictable
  CHECK(a.unauthenticated() == 1);
  CHECK(a.authenticated_count() == 1);
  auto n = a.admit();  // the unauthenticated pool has a free place again
  CHECK(n.admitted);
  CHECK_FALSE(n.evict);
  auto m = a.admit();  // full: the oldest unauthenticated one goes, never t[0]
  REQUIRE(m.evict);
  CHECK(*m.evict == t[1]);
  a.closed(t[0]);
  CHECK(a.authenticated_count() == 0);
}

TEST_CASE("admission: the whole cap holds: authenticated connections fill the reserve, the rest is evicted in turn") {
  connection_admission a({.max_connections = 3, .max_unauthenticated_connections = 2});
  auto t = admit_all(a, 2);
  for (auto id : t) {
    a.answering(id);
    a.authenticated(id);
  }
  auto u = a.admit();  // the third and last place
  CHECK(u.admitted);
  CHECK_FALSE(u.evict);
  auto v = a.admit();  // over max_connections: the waiting unauthenticated one gives way
  CHECK(v.admitted);
  CHECK(v.evict == u.id);
  a.answering(v.id);
  CHECK_FALSE(a.admit().admitted);  // nothing waiting to give way: refused
  CHECK(a.unauthenticated() + a.authenticated_count() == 3);
}

TEST_CASE("admission: a flood of newcomers leaves each connection the pool's size in arrivals to send its request") {
  constexpr int pool = 16;
  connection_admission a({.max_connections = 64, .max_unauthenticated_connections = pool});
  admit_all(a, pool);
  auto client = a.admit().id;  // a real client's connection arrives amid the flood
  for (int i = 0; i < pool - 1; ++i) CHECK(a.admit().evict != client);
  // It sent its request (answered, with a token): from then on the flood cannot touch it.
  a.answering(client);
  a.authenticated(client);
  for (int i = 0; i < 10 * pool; ++i) {
    auto d = a.admit();
    CHECK(d.admitted);
    CHECK(d.evict != client);
  }
  CHECK(a.unauthenticated() == pool);
  CHECK(a.authenticated_count() == 1);
}
