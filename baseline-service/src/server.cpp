// Beast listener and sessions: per-connection timeouts, body limit, connection pools, optional TLS.
#include "rnx/service/server.hpp"

#include "rnx/service/admission.hpp"

#include "rnx/common/error.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <iostream>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace rnx::service {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using plain_stream = beast::tcp_stream;
using tls_stream = beast::ssl_stream<beast::tcp_stream>;

namespace {

struct shared_state {
  api& handler;
  metrics& stats;
  server_options options;
  // Requests are answered here, in the order they arrived, while the I/O threads only read and write: a verdict
  // computes for milliseconds, and on the I/O threads it would hold up reads of other connections unevenly.
  asio::thread_pool& workers;
  connection_admission admission{options.admission};
  std::atomic<std::size_t> unauthenticated{0};  // requests without credentials being read or answered
  std::mutex evictors_mutex;
  std::unordered_map<connection_admission::ticket, std::function<void()>> evictors;  // by connection, while open

  void on_evict(connection_admission::ticket t, std::function<void()> evict) {
    std::lock_guard lock(evictors_mutex);
    evictors[t] = std::move(evict);
  }
  void forget(connection_admission::ticket t) {
    std::lock_guard lock(evictors_mutex);
    evictors.erase(t);
  }
  // Closes connection `t`, which the admission has already stopped counting (evicted, or idle too long).
  void close_released(connection_admission::ticket t) {
    std::function<void()> close;
    {
      std::lock_guard lock(evictors_mutex);
      auto it = evictors.find(t);
      if (it == evictors.end()) return;
      close = std::move(it->second);
      evictors.erase(it);
    }
    close();
  }
};

// Holds the connection's place in the admission's pools (and its address's count) while the session lives.
class connection_slot {
 public:
  connection_slot(shared_state& state, connection_admission::ticket ticket) : state_(state), ticket_(ticket) {
    state_.stats.connection_opened();
  }
  ~connection_slot() {
    state_.forget(ticket_);
    state_.admission.closed(ticket_);
    state_.stats.connection_closed();
  }
  connection_slot(const connection_slot&) = delete;
  connection_slot& operator=(const connection_slot&) = delete;
  connection_admission::ticket ticket() const { return ticket_; }

 private:
  shared_state& state_;
  connection_admission::ticket ticket_;
};

// One of the max_unauthenticated slots, held from a credential-less request's headers to its response's end.
class unauthenticated_slot {
 public:
  explicit unauthenticated_slot(shared_state& state) : state_(state) { state_.stats.unauthenticated_request_started(); }
  ~unauthenticated_slot() {
    --state_.unauthenticated;
    state_.stats.unauthenticated_request_ended();
  }
  unauthenticated_slot(const unauthenticated_slot&) = delete;
  unauthenticated_slot& operator=(const unauthenticated_slot&) = delete;
  static bool try_take(shared_state& state) {
    if (++state.unauthenticated > state.options.admission.max_unauthenticated_requests) {
      --state.unauthenticated;
      return false;
    }
    return true;
  }

 private:
  shared_state& state_;
};

// The key a client's connections are counted under: its IPv4 address (an IPv4-mapped IPv6 one as IPv4), or for
// IPv6 its /64 prefix, since one host there is commonly given a whole /64 to pick addresses from.
std::string address_key(const asio::ip::address& a) {
  if (!a.is_v6()) return a.to_string();
  auto v6 = a.to_v6();
  if (v6.is_v4_mapped()) return asio::ip::make_address_v4(asio::ip::v4_mapped, v6).to_string();
  auto bytes = v6.to_bytes();
  std::fill(bytes.begin() + 8, bytes.end(), 0);
  return asio::ip::address_v6(bytes).to_string() + "/64";
}

// Whether a request carries credentials: a bearer token or the sign-in cookie. Only their presence is looked at
// here (the I/O threads do not touch the database); a wrong token is still 401 from the API.
bool carries_credentials(const bhttp::request_parser<bhttp::string_body>::value_type& req) {
  auto auth = req[bhttp::field::authorization];
  if (auth.size() > 7 && auth.substr(0, 7) == "Bearer ") return true;
  auto cookie = req[bhttp::field::cookie];
  return cookie.find("rnx_token=") != boost::beast::string_view::npos;
}

// A liveness probe: answered from the reserve, never refused by --max-unauthenticated, so that a load balancer's
// health check without a token still sees the server alive while unauthenticated clients flood it.
bool is_health_probe(const bhttp::request_parser<bhttp::string_body>::value_type& req) {
  return req.method() == bhttp::verb::get && req.target() == "/healthz";
}

// One connection. Requests are answered in order with one response in flight: the next read starts
// when the write finished, so a client that pipelines but never reads is held back by TCP and the
// write timeout, and can only stall itself (the response queue is bounded at one).
template <class Stream>
class session : public std::enable_shared_from_this<session<Stream>> {
 public:
  session(Stream&& stream, shared_state& state, connection_admission::ticket ticket)
      : stream_(std::move(stream)), state_(state), slot_(state, ticket) {}

  void run() {
    // Registered before the listener admits the next connection, which may be the one that evicts this.
    state_.on_evict(slot_.ticket(), [weak = this->weak_from_this()] {
      if (auto self = weak.lock()) asio::post(self->stream_.get_executor(), [self] { self->lowest().close(); });
    });
    // Start on the session's strand so every handler of this connection is serialized.
    asio::dispatch(stream_.get_executor(), beast::bind_front_handler(&session::start, this->shared_from_this()));
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void start() {
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      lowest().expires_after(state_.options.header_timeout);
      stream_.async_handshake(asio::ssl::stream_base::server,
                              beast::bind_front_handler(&session::on_handshake, this->shared_from_this()));
    } else {
      do_read();
    }
  }

  void on_handshake(beast::error_code ec) {
    if (ec) return;  // a failed handshake has no HTTP channel to answer on
    do_read();
  }

  // Two phases, each with its own deadline: the headers (a client that sends them slowly, or not at all, is cut
  // off after header_timeout), then the body (read_timeout).
  void do_read() {
    state_.admission.waiting(slot_.ticket());
    unauthenticated_.reset();
    parser_.emplace();
    parser_->body_limit(state_.options.body_limit);
    parser_->header_limit(16 * 1024);
    lowest().expires_after(state_.options.header_timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             beast::bind_front_handler(&session::on_header, this->shared_from_this()));
  }

  void on_header(beast::error_code ec, std::size_t n) {
    if (ec) return on_read(ec, n);
    if (!carries_credentials(parser_->get()) && !is_health_probe(parser_->get())) {
      if (!unauthenticated_slot::try_take(state_)) {
        auto res = error_response(503, "busy",
                                  "too many requests without a token at once; retry in a moment, or send the "
                                  "project's token (Authorization: Bearer ...)",
                                  parser_->get().version(), false);
        res.set(bhttp::field::retry_after, "1");
        // Counted under its own route label, since the API never saw it.
        state_.stats.observe_request("unauthenticated-limit", std::string_view(parser_->get().method_string()), 503,
                                     0.0);
        return send(std::move(res), false);
      }
      unauthenticated_.emplace(state_);
    }
    lowest().expires_after(state_.options.read_timeout);
    bhttp::async_read(stream_, buffer_, *parser_,
                      beast::bind_front_handler(&session::on_read, this->shared_from_this()));
  }

  // The version of the request being read, to answer in: its start line's, else (nothing parsed yet) HTTP/1.1, the
  // parser's own default.
  unsigned request_version() const { return parser_ ? parser_->get().version() : 11; }

  void on_read(beast::error_code ec, std::size_t) {
    if (ec == bhttp::error::end_of_stream) return do_close();
    if (ec == bhttp::error::body_limit) {
      // The rest of the body is still arriving: answer, then drain so the client sees the 413.
      return send(
          error_response(413, "too_large",
                         "request body is over the server's limit of " + std::to_string(state_.options.body_limit) +
                             " bytes; split the upload or raise rnx-server --body-limit",
                         request_version(), false),
          true);
    }
    if (ec && ec.category() == bhttp::make_error_code(bhttp::error::bad_target).category()) {
      return send(error_response(400, "bad_input", "malformed HTTP request: " + ec.message(), request_version(), false),
                  true);
    }
    if (ec) return do_close();  // timeout, reset, evicted: nobody to answer
    state_.admission.answering(slot_.ticket());
    state_.stats.request_queued();
    asio::post(state_.workers, [self = this->shared_from_this(), req = parser_->release(),
                                queued_at = std::chrono::steady_clock::now()]() mutable {
      self->state_.stats.request_started(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - queued_at).count());
      response res = self->answer(req);
      asio::dispatch(self->stream_.get_executor(),
                     [self, res = std::move(res)]() mutable { self->send(std::move(res), false); });
    });
  }

  // On a request thread (the database is read here, never on the I/O threads): the token is checked on every
  // request, the admission decides, and the request is answered or refused.
  response answer(const request& req) {
    try {
      const credential who = state_.handler.check_credentials(req);
      const request_admission what = state_.admission.present(slot_.ticket(), who, req.keep_alive());
      if (what != request_admission::answer && what != request_admission::answer_then_close) {
        return state_.handler.refusal(req, what, who);
      }
      response res = state_.handler.handle_request(req, who);
      if (closes_connection(what)) res.keep_alive(false);
      return res;
    } catch (...) {
      // handle_request answers its own errors; anything past it must not end the pool's thread (an
      // exception leaving an asio::thread_pool handler terminates the process).
      std::cerr << "rnx-server: unexpected error answering a request\n";
      return error_response(500, "internal", "internal error (please report it)", req.version(), false);
    }
  }

  void send(response res, bool drain_after) {
    response_.emplace(std::move(res));
    drain_after_ = drain_after;
    lowest().expires_after(state_.options.write_timeout);
    bhttp::async_write(stream_, *response_, beast::bind_front_handler(&session::on_write, this->shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return do_close();
    bool keep_alive = response_->keep_alive();
    response_.reset();
    unauthenticated_.reset();
    if (drain_after_) return drain_then_close();
    if (!keep_alive) return do_close();
    do_read();
  }

  void drain_then_close() {
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      do_close();
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      // Lingering close: keep reading what the client still sends so that the answer (413) reaches it
      // instead of a reset; a slow client (or a sanitizer build) can need several seconds for 20 MB.
      lowest().expires_after(std::chrono::seconds(15));
      do_drain();
    }
  }

  void do_drain() {
    if constexpr (std::is_same_v<Stream, plain_stream>) {
      drain_buffer_.resize(64 * 1024);
      stream_.async_read_some(asio::buffer(drain_buffer_),
                              [self = this->shared_from_this()](beast::error_code ec, std::size_t n) {
                                self->drained_ += n;
                                if (ec || self->drained_ > (256u << 20)) return self->do_close();
                                self->do_drain();
                              });
    }
  }

  void do_close() {
    if constexpr (std::is_same_v<Stream, tls_stream>) {
      lowest().expires_after(std::chrono::seconds(2));
      stream_.async_shutdown([self = this->shared_from_this()](beast::error_code) {
        beast::error_code ignored;
        self->lowest().socket().close(ignored);
      });
    } else {
      beast::error_code ignored;
      stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream_.socket().close(ignored);
    }
  }

  Stream stream_;
  shared_state& state_;
  connection_slot slot_;
  std::optional<unauthenticated_slot> unauthenticated_;
  beast::flat_buffer buffer_;
  std::optional<bhttp::request_parser<bhttp::string_body>> parser_;
  std::optional<response> response_;
  bool drain_after_ = false;
  std::vector<char> drain_buffer_;
  std::size_t drained_ = 0;
};

class listener : public std::enable_shared_from_this<listener> {
 public:
  listener(asio::io_context& ioc, tcp::acceptor& acceptor, shared_state& state, asio::ssl::context* tls)
      : ioc_(ioc), acceptor_(acceptor), state_(state), tls_(tls) {}

  void run() { do_accept(); }

 private:
  void do_accept() {
    acceptor_.async_accept(asio::make_strand(ioc_),
                           beast::bind_front_handler(&listener::on_accept, shared_from_this()));
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;  // the server is stopping
    if (!ec) {
      beast::error_code peer_ec;
      auto peer = socket.remote_endpoint(peer_ec);
      std::string address = peer_ec ? std::string("unknown") : address_key(peer.address());
      admit(std::move(socket), address);
    }
    // Errors such as EMFILE are transient: keep accepting.
    do_accept();
  }

  void admit(tcp::socket socket, const std::string& address) {
    auto d = state_.admission.admit(address);
    // Refused: its address is at its cap, or every slot is held by a connection in the reserve or being answered.
    if (!d.admitted) return refuse(socket);
    if (d.evict) {
      state_.stats.connection_evicted();
      state_.close_released(*d.evict);
    }
    if (tls_) {
      std::make_shared<session<tls_stream>>(tls_stream(plain_stream(std::move(socket)), *tls_), state_, d.id)->run();
    } else {
      std::make_shared<session<plain_stream>>(plain_stream(std::move(socket)), state_, d.id)->run();
    }
  }

  void refuse(tcp::socket& socket) {
    state_.stats.connection_refused();
    beast::error_code ignored;
    socket.close(ignored);
  }

  asio::io_context& ioc_;
  tcp::acceptor& acceptor_;
  shared_state& state_;
  asio::ssl::context* tls_;
};

}  // namespace

struct server::impl {
  impl(api& handler, metrics& m, server_options options)
      : state{handler, m, std::move(options), workers},
        ioc(std::max(1, state.options.threads)),
        workers(static_cast<std::size_t>(std::max(1, state.options.threads))),
        acceptor(ioc),
        signals(ioc) {}
  // First, so destroyed last: sessions still queued in the pool or the io_context when they are destroyed
  // release their connection slot into it.
  shared_state state;
  asio::io_context ioc;
  asio::thread_pool workers;
  tcp::acceptor acceptor;
  asio::signal_set signals;
  asio::steady_timer idle_sweep{ioc};
  std::optional<asio::ssl::context> tls;
  std::vector<std::thread> threads;

  // Every quarter of the idle limit (within 50 ms to 1 s), closes the kept-alive connections idle past it: a
  // connection is closed at most a quarter of the limit late.
  void sweep_idle() {
    auto period = std::clamp<std::chrono::milliseconds>(state.options.admission.idle_timeout / 4,
                                                        std::chrono::milliseconds(50), std::chrono::seconds(1));
    idle_sweep.expires_after(period);
    idle_sweep.async_wait([this](beast::error_code ec) {
      if (ec) return;  // cancelled: the server is stopping
      for (auto t : state.admission.idle_expired()) {
        state.stats.connection_idle_closed();
        state.close_released(t);
      }
      sweep_idle();
    });
  }
};

server::server(api& handler, metrics& m, server_options options)
    : impl_(std::make_unique<impl>(handler, m, std::move(options))) {}

server::~server() {
  stop();
  wait();
}

void server::start() {
  auto& o = impl_->state.options;
  if (o.admission.max_unauthenticated_connections > o.admission.max_connections) {
    throw error(errc::usage,
                "--max-unauthenticated-connections (" + std::to_string(o.admission.max_unauthenticated_connections) +
                    ") must not be above --max-connections (" + std::to_string(o.admission.max_connections) +
                    "): the difference is the reserve for connections that sent a valid token");
  }
  if (!o.tls_cert.empty() || !o.tls_key.empty()) {
    if (o.tls_cert.empty() || o.tls_key.empty()) {
      throw error(errc::usage, "TLS needs both --tls-cert and --tls-key");
    }
    impl_->tls.emplace(asio::ssl::context::tls_server);
    impl_->tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                            asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                            asio::ssl::context::no_tlsv1_1);
    beast::error_code ec;
    impl_->tls->use_certificate_chain_file(o.tls_cert, ec);
    if (ec) throw error(errc::not_found, o.tls_cert + ": cannot load the TLS certificate chain (PEM): " + ec.message());
    impl_->tls->use_private_key_file(o.tls_key, asio::ssl::context::pem, ec);
    if (ec) throw error(errc::not_found, o.tls_key + ": cannot load the TLS private key (PEM): " + ec.message());
  }

  beast::error_code ec;
  std::string where = o.host + ":" + std::to_string(o.port);
  tcp::resolver resolver(impl_->ioc);
  auto endpoints = resolver.resolve(o.host, std::to_string(o.port), ec);
  if (ec || endpoints.empty()) {
    throw error(errc::usage, "cannot resolve listen address " + where + ": " + ec.message());
  }
  tcp::endpoint endpoint = *endpoints.begin();
  auto& acceptor = impl_->acceptor;
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw error(errc::usage, "cannot listen on " + where + ": " + ec.message() + " (is the port in use?)");

  std::make_shared<listener>(impl_->ioc, acceptor, impl_->state, impl_->tls ? &*impl_->tls : nullptr)->run();
  impl_->sweep_idle();
  if (handle_signals_) {
    impl_->signals.add(SIGINT);
    impl_->signals.add(SIGTERM);
    impl_->signals.async_wait([this](beast::error_code e, int) {
      if (!e) stop();
    });
  }
  for (int i = 0; i < std::max(1, o.threads); ++i) {
    impl_->threads.emplace_back([this] {
      for (;;) {
        try {
          impl_->ioc.run();
          return;
        } catch (const std::exception& e) {
          // A handler threw past its own checks; log and keep the pool alive.
          std::cerr << "rnx-server: unexpected error in a connection: " << e.what() << "\n";
        }
      }
    });
  }
}

unsigned short server::port() const {
  beast::error_code ec;
  auto endpoint = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : endpoint.port();
}

void server::wait() {
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  impl_->threads.clear();
  impl_->workers.join();
}

void server::stop() {
  asio::post(impl_->ioc, [this] {
    beast::error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->signals.cancel(ignored);
    impl_->idle_sweep.cancel();
  });
  impl_->ioc.stop();
  // Requests not yet started are dropped with their connections; one being answered finishes.
  impl_->workers.stop();
}

}  // namespace rnx::service
