// The network side of rnx-server: a Beast listener and sessions (plain or TLS) on a thread pool.
#pragma once

#include "rnx/service/admission.hpp"
#include "rnx/service/api.hpp"
#include "rnx/service/metrics.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace rnx::service {

struct server_options {
  std::string host = "127.0.0.1";
  unsigned short port = 8722;  // 0 = let the OS pick; port() tells which
  int threads = 2;
  std::size_t body_limit = 16u << 20;
  // The request line and headers (and the idle wait before them on a kept-alive connection, and a TLS handshake).
  std::chrono::milliseconds header_timeout{std::chrono::seconds(10)};
  std::chrono::milliseconds read_timeout{std::chrono::seconds(30)};  // the body, once the headers are in
  std::chrono::milliseconds write_timeout{std::chrono::seconds(30)};
  // Who is held open and answered, and for how long between requests: connections in all, per address, per token
  // and per project, the unauthenticated pool and the reserve, the idle limit (admission.hpp; docs/service.md).
  admission_limits admission;
  std::string tls_cert;  // PEM certificate chain; with tls_key enables HTTPS
  std::string tls_key;
};

class server {
 public:
  server(api& handler, metrics& m, server_options options);
  ~server();
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  // Binds and starts the worker threads; throws rnx::error when the address cannot be bound.
  void start();
  unsigned short port() const;
  // Blocks until stop() (or SIGINT/SIGTERM when handle_signals was set before start()).
  void wait();
  void stop();
  void handle_signals() { handle_signals_ = true; }

 private:
  struct impl;
  std::unique_ptr<impl> impl_;
  bool handle_signals_ = false;
};

}  // namespace rnx::service
