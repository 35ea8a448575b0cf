// The connection pools of rnx-server: the unauthenticated one, evicted oldest-waiting first, and the reserve.
#include "rnx/service/admission.hpp"

namespace rnx::service {

connection_admission::connection_admission(admission_limits limits) : limits_(limits) {}

connection_admission::decision connection_admission::admit() {
  std::lock_guard lock(mutex_);
  decision d;
  const bool full = unauthenticated_ >= limits_.max_unauthenticated_connections ||
                    unauthenticated_ + authenticated_ >= limits_.max_connections;
  if (full) {
    // Refusing the newcomer instead would refuse every client: each new connection, a CI job's included, is
    // unauthenticated until its first request is read. Evicting the longest waiter gives every connection as
    // long as the pool's size in newer arrivals to send its request, which a real client does at once.
    if (waiting_.empty()) return d;
    auto oldest = waiting_.begin();
    d.evict = oldest->second;
    waiting_.erase(oldest);
    open_.erase(*d.evict);
    --unauthenticated_;
  }
  d.admitted = true;
  d.id = next_ticket_++;
  entry e;
  e.waiting_since = next_turn_++;
  waiting_.emplace(*e.waiting_since, d.id);
  open_.emplace(d.id, e);
  ++unauthenticated_;
  return d;
}

void connection_admission::stop_waiting(entry& e) {
  if (e.waiting_since) waiting_.erase(*e.waiting_since);
  e.waiting_since.reset();
}

void connection_admission::waiting(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end() || it->second.authenticated) return;
  stop_waiting(it->second);
  it->second.waiting_since = next_turn_++;
  waiting_.emplace(*it->second.waiting_since, t);
}

void connection_admission::answering(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it != open_.end()) stop_waiting(it->second);
}

void connection_admission::authenticated(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end() || it->second.authenticated) return;
  stop_waiting(it->second);
  it->second.authenticated = true;
  --unauthenticated_;
  ++authenticated_;
}

void connection_admission::closed(ticket t) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(t);
  if (it == open_.end()) return;
  stop_waiting(it->second);
  --(it->second.authenticated ? authenticated_ : unauthenticated_);
  open_.erase(it);
}

std::size_t connection_admission::unauthenticated() const {
  std::lock_guard lock(mutex_);
  return unauthenticated_;
}

std::size_t connection_admission::authenticated_count() const {
  std::lock_guard lock(mutex_);
  return authenticated_;
}

}  // namespace rnx::service
