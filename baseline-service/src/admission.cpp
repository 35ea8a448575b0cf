// The admission rules of rnx-server: the unauthenticated pool (oldest waiter evicted first), the reserve held under
// tokens (capped per token and per project, checked on every request), per-address caps and the idle limit.
#include "rnx/service/admission.hpp"

namespace rnx::service {

namespace {

std::size_t count_in(const std::unordered_map<std::int64_t, std::size_t>& counts, std::int64_t key) {
  auto it = counts.find(key);
  return it == counts.end() ? 0 : it->second;
}

}  // namespace

std::string_view to_string(credential_state state) {
  switch (state) {
    case credential_state::none: return "none";
    case credential_state::valid: return "valid";
    case credential_state::invalid: return "invalid";
  }
  return "invalid";
}

std::string_view to_string(request_admission what) {
  switch (what) {
    case request_admission::answer: return "answer";
    case request_admission::answer_then_close: return "answer-then-close";
    case request_admission::refuse_token_not_valid: return "token-not-valid";
    case request_admission::refuse_token_limit: return "connections-per-token-limit";
    case request_admission::refuse_project_limit: return "connections-per-project-limit";
  }
  return "answer";
}

bool closes_connection(request_admission what) { return what != request_admission::answer; }

connection_admission::connection_admission(admission_limits limits, clock_fn now)
    : limits_(limits), now_(std::move(now)) {
  if (limits_.max_unauthenticated_connections > limits_.max_connections) {
    limits_.max_unauthenticated_connections = limits_.max_connections;
  }
}

connection_admission::decision connection_admission::admit(std::string_view address) {
  std::lock_guard lock(mutex_);
  decision d;
  std::string key(address);
  auto per_address = per_address_.find(key);
  // One address at its own cap is refused before it can evict anyone: the slots stay for everyone else.
  if (per_address != per_address_.end() && per_address->second >= limits_.max_connections_per_address) {
    d.refused = refusal::address_limit;
    return d;
  }
  const bool pool_full = unauthenticated_ >= limits_.max_unauthenticated_connections;
  const bool server_full = unauthenticated_ + held_ >= limits_.max_connections;
  if ((pool_full || server_full) && !evictable_.empty()) {
    // Refusing the newcomer instead would refuse every client: each new connection, a CI job's included, is
    // unauthenticated until its first request is read. Evicting the longest waiter gives every connection as
    // long as the pool's size in newer arrivals to send its request, which a real client does at once.
    auto oldest = evictable_.begin();
    d.evict = oldest->second;
    auto it = open_.find(*d.evict);
    release(it->second);
    open_.erase(it);
  } else if (server_full) {
    d.refused = refusal::full;
    return d;
  }
  // A full pool with none of it waiting (every one being answered: a burst of requests queued for the request
  // threads) lets the newcomer take a place the reserve does not use now; max_connections still bounds the whole.
  d.admitted = true;
  d.id = next_ticket_++;
  entry e;
  e.address = std::move(key);
  ++per_address_[e.address];
  ++unauthenticated_;
  e.waiting_turn = next_turn_++;
  evictable_.emplace(*e.waiting_turn, d.id);
  open_.emplace(d.id, std::move(e));
  return d;
}

void connection_admission::stop_waiting(entry& e) {
  if (e.waiting_turn) evictable_.erase(*e.waiting_turn);
  e.waiting_turn.reset();
  e.idle_since.reset();
}

void connection_admission::hold(entry& e, const credential& c) {
  e.holder = c;
  ++per_token_[c.token_id];
  ++per_project_[c.project_id];
  --unauthenticated_;
  ++held_;
}

void connection_admission::unhold(entry& e) {
  if (!e.holder) return;
  auto drop = [](auto& counts, std::int64_t key) {
    auto it = counts.find(key);
    if (it != counts.end() && --it->second == 0) counts.erase(it);
  };
  drop(per_token_, e.holder->token_id);
  drop(per_project_, e.holder->project_id);
  e.holder.reset();
  --held_;
  ++unauthenticated_;
}

void connection_admission::release(entry& e) {
  stop_waiting(e);
  unhold(e);
  --unauthenticated_;
  auto it = per_address_.find(e.address);
  if (it != per_address_.end() && --it->second == 0) per_address_.erase(it);
}

void connection_admission::waiting(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end()) return;
  entry& e = it->second;
  stop_waiting(e);
  if (e.answered) e.idle_since = now_();
  // A held connection is never evicted: the reserve is bounded by the caps and the idle limit instead.
  if (!e.holder) {
    e.waiting_turn = next_turn_++;
    evictable_.emplace(*e.waiting_turn, t);
  }
}

void connection_admission::answering(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it != open_.end()) stop_waiting(it->second);
}

request_admission connection_admission::present(ticket t, const credential& c, bool keep_alive) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end()) return request_admission::answer_then_close;  // already evicted or expired
  entry& e = it->second;
  e.answered = true;
  const bool was_held = e.holder.has_value();
  switch (c.state) {
    case credential_state::none:
      // A held connection that stops sending its token would keep its place without one: answered, then closed.
      return was_held ? request_admission::answer_then_close : request_admission::answer;
    case credential_state::invalid:
      // Revoked or expired since it was held: refused. A connection never held is answered as the API answers a
      // bad token (401 where one is needed), and closed.
      return was_held ? request_admission::refuse_token_not_valid : request_admission::answer_then_close;
    case credential_state::valid: break;
  }
  if (was_held && e.holder->token_id == c.token_id) return request_admission::answer;
  if (!was_held && !keep_alive) return request_admission::answer;
  // A newly presented token (or another one than before): its caps decide, counting this connection's place only
  // once. A held connection keeps its place in the reserve while it changes tokens.
  if (was_held) unhold(e);
  if (count_in(per_token_, c.token_id) >= limits_.max_connections_per_token) {
    return request_admission::refuse_token_limit;
  }
  if (count_in(per_project_, c.project_id) >= limits_.max_connections_per_project) {
    return request_admission::refuse_project_limit;
  }
  // The reserve is full: answered all the same, from the unauthenticated pool (evictable while it waits).
  if (held_ >= limits_.reserve()) return request_admission::answer;
  hold(e, c);
  return request_admission::answer;
}

std::vector<connection_admission::ticket> connection_admission::idle_expired() {
  std::lock_guard lock(mutex_);
  std::vector<ticket> out;
  const auto now = now_();
  for (auto it = open_.begin(); it != open_.end();) {
    entry& e = it->second;
    if (e.idle_since && now - *e.idle_since > limits_.idle_timeout) {
      out.push_back(it->first);
      release(e);
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

void connection_admission::closed(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end()) return;
  release(it->second);
  open_.erase(it);
}

std::size_t connection_admission::unauthenticated() const {
  std::lock_guard lock(mutex_);
  return unauthenticated_;
}

std::size_t connection_admission::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

std::size_t connection_admission::held_by_token(std::int64_t token_id) const {
  std::lock_guard lock(mutex_);
  return count_in(per_token_, token_id);
}

std::size_t connection_admission::held_by_project(std::int64_t project_id) const {
  std::lock_guard lock(mutex_);
  return count_in(per_project_, project_id);
}

}  // namespace rnx::service
