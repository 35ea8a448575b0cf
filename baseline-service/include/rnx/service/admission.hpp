// Which connections rnx-server holds when it is full: a reserve for connections that presented a valid token, and
// among the others the one that has waited longest for its request is closed first to let a new one in.
//
// No sockets and no clock here (the server calls it, tests drive it directly):
//   connection_admission a({.max_connections = 512, .max_unauthenticated_connections = 256});
//   auto d = a.admit();            // a new connection; d.evict names one to close first, d.admitted may be false
//   a.answering(d.id);             // its request is complete and being answered: not evictable now
//   a.authenticated(d.id);         // it sent a valid token: held in the reserve, never evicted
//   a.waiting(d.id);               // back to waiting for its next request (an unauthenticated one: evictable)
//   a.closed(d.id);
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

namespace rnx::service {

struct admission_limits {
  std::size_t max_connections = 512;
  // Connections that have not presented a valid token (every new one, until a whole request with a valid token was
  // answered); max_connections minus this is the reserve only authenticated connections use.
  std::size_t max_unauthenticated_connections = 256;
};

class connection_admission {
 public:
  using ticket = std::uint64_t;
  struct decision {
    bool admitted = false;
    ticket id = 0;                // the new connection's, when admitted
    std::optional<ticket> evict;  // an unauthenticated connection to close now; already no longer counted
  };

  explicit connection_admission(admission_limits limits);

  // A new connection, unauthenticated and waiting for its request. When its pool (or the whole server) is full, the
  // unauthenticated connection waiting longest is evicted to make room; with none waiting it is refused.
  decision admit();
  void waiting(ticket t);        // waiting for, or reading, a request: an unauthenticated one may be evicted
  void answering(ticket t);      // a complete request being answered: not evicted until it waits again
  void authenticated(ticket t);  // answered a request with a valid token: moves to the reserve for good
  void closed(ticket t);         // gone; a ticket already evicted (or unknown) is ignored

  std::size_t unauthenticated() const;
  std::size_t authenticated_count() const;

 private:
  struct entry {
    bool authenticated = false;
    std::optional<std::uint64_t> waiting_since;  // its place in waiting_, while it is there
  };
  void stop_waiting(entry& e);

  admission_limits limits_;
  mutable std::mutex mutex_;
  ticket next_ticket_ = 1;
  std::uint64_t next_turn_ = 1;  // the order connections began to wait in: the oldest is evicted first
  std::unordered_map<ticket, entry> open_;
  std::map<std::uint64_t, ticket> waiting_;  // evictable connections by the turn they began to wait
  std::size_t unauthenticated_ = 0;
  std::size_t authenticated_ = 0;
};

}  // namespace rnx::service
