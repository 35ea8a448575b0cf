// Which connections and requests rnx-server holds: every admission rule, with no sockets and an injected clock.
//
// Two pools share --max-connections: the unauthenticated one (every new connection; when full, the connection that
// has waited longest for a request gives way) and a bounded reserve for connections held under a valid token, capped
// per token and per project. The token is checked on every request: a held connection whose request no longer
// carries a valid token is refused and closed. A kept-alive connection idle past idle_timeout is closed.
//
// The server calls it, tests drive it directly:
//   connection_admission a(limits, clock);
//   auto d = a.admit("127.0.0.2");  // a new connection; d.evict names one to close first, d.admitted may be false
//   a.answering(d.id);              // its request is complete: not evictable now
//   auto what = a.present(d.id, {credential_state::valid, token_id, project_id});  // answer, or refuse (and how)
//   a.waiting(d.id);                // back to waiting for its next request
//   for (auto t : a.idle_expired()) close(t);   // kept-alive connections idle past the limit, already released
//   a.closed(d.id);
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rnx::service {

// Every limit on who the server holds, with its default (docs/service.md, "Under abuse"; rnx-server serve flags of
// the same names).
struct admission_limits {
  std::size_t max_connections = 512;  // open connections in all
  // Connections not held under a token (every new one, until a request with a valid token); the rest of
  // max_connections is the reserve for held ones. rnx-server's default: half of max_connections.
  std::size_t max_unauthenticated_connections = 256;
  // An address's connections beyond this are closed at once, before they can evict anyone.
  std::size_t max_connections_per_address = 64;
  // Held connections of one token, and of one project (all its tokens together), at most: a request with a valid
  // token beyond either gets 429 with Retry-After and its connection is closed. One token holder then holds at most
  // max_connections_per_project of the reserve, and the rest stays for other projects' clients.
  std::size_t max_connections_per_token = 32;
  std::size_t max_connections_per_project = 64;
  // A kept-alive connection waiting for its next request longer than this is closed, held or not (the first request
  // on a new connection has header_timeout instead).
  std::chrono::milliseconds idle_timeout{std::chrono::seconds(5)};
  // Requests without credentials being read or answered at once; one more gets 503 with Retry-After (the server
  // counts these; GET /healthz is not counted).
  std::size_t max_unauthenticated_requests = 64;

  // The reserve: places for connections held under a token.
  std::size_t reserve() const {
    return max_connections > max_unauthenticated_connections ? max_connections - max_unauthenticated_connections : 0;
  }
};

// What a request's credentials turned out to be, checked against the database on every request.
enum class credential_state {
  none,     // no bearer token and no sign-in cookie
  valid,    // a token of a project, neither revoked nor expired
  invalid,  // unknown, revoked or expired
};
std::string_view to_string(credential_state state);

struct credential {
  credential_state state = credential_state::none;
  std::int64_t token_id = 0;    // when valid
  std::int64_t project_id = 0;  // when valid
};

// What the server does with a complete request, given its credentials.
enum class request_admission {
  answer,                  // answer it; the connection stays open as the request asks
  answer_then_close,       // answer it, then close: it carries no token, or one that is not valid
  refuse_token_not_valid,  // 401 and close: the connection was held under a token and this one is not valid
  refuse_token_limit,      // 429 with Retry-After and close: max_connections_per_token reached
  refuse_project_limit,    // 429 with Retry-After and close: max_connections_per_project reached
};
std::string_view to_string(request_admission what);
bool closes_connection(request_admission what);

class connection_admission {
 public:
  using ticket = std::uint64_t;
  using clock = std::chrono::steady_clock;
  using clock_fn = std::function<clock::time_point()>;

  enum class refusal { none, address_limit, full };
  struct decision {
    bool admitted = false;
    refusal refused = refusal::none;
    ticket id = 0;                // the new connection's, when admitted
    std::optional<ticket> evict;  // an unauthenticated connection to close now; already no longer counted
  };

  explicit connection_admission(admission_limits limits, clock_fn now = clock::now);

  // A new connection from `address`, unauthenticated and waiting for its request. An address at its cap is refused;
  // when the unauthenticated pool (or the whole server) is full, the unauthenticated connection waiting longest is
  // evicted to make room. With none waiting (every one being answered) the newcomer takes a place the reserve does
  // not use now, and is refused only when the whole server is full.
  decision admit(std::string_view address);
  void waiting(ticket t);    // waiting for its next request (an unauthenticated one may be evicted; idle is timed)
  void answering(ticket t);  // a complete request being read or answered: neither evicted nor idle
  // The request's credentials, checked by the caller against the database on every request: whether to answer it,
  // and whether the connection is then held under the token, closed, or refused. A request that closes its connection
  // after its answer (keep_alive false) on a connection not held takes no place, so no cap refuses it.
  request_admission present(ticket t, const credential& c, bool keep_alive = true);
  // Kept-alive connections that have waited for their next request longer than idle_timeout: no longer counted,
  // to be closed by the caller.
  std::vector<ticket> idle_expired();
  void closed(ticket t);  // gone; a ticket already evicted or expired (or unknown) is ignored

  std::size_t unauthenticated() const;
  std::size_t held() const;  // connections in the reserve
  std::size_t held_by_token(std::int64_t token_id) const;
  std::size_t held_by_project(std::int64_t project_id) const;
  const admission_limits& limits() const { return limits_; }

 private:
  struct entry {
    std::string address;
    std::optional<credential> holder;             // the token it is held under, when in the reserve
    std::optional<std::uint64_t> waiting_turn;    // its place in evictable_, while it is there
    std::optional<clock::time_point> idle_since;  // waiting after an answered request
    bool answered = false;                        // at least one request presented: a kept-alive connection
  };
  void stop_waiting(entry& e);
  void release(entry& e);  // stops counting it anywhere; the caller erases it
  void hold(entry& e, const credential& c);
  void unhold(entry& e);

  admission_limits limits_;
  clock_fn now_;
  mutable std::mutex mutex_;
  ticket next_ticket_ = 1;
  std::uint64_t next_turn_ = 1;  // the order connections began to wait in: the oldest is evicted first
  std::unordered_map<ticket, entry> open_;
  std::map<std::uint64_t, ticket> evictable_;  // unauthenticated connections waiting, by the turn they began
  std::unordered_map<std::string, std::size_t> per_address_;
  std::unordered_map<std::int64_t, std::size_t> per_token_;
  std::unordered_map<std::int64_t, std::size_t> per_project_;
  std::size_t unauthenticated_ = 0;
  std::size_t held_ = 0;
};

}  // namespace rnx::service
