// A scripted HTTP/1.1 server on 127.0.0.1 for tests: records every request and answers from a queue.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rnx::testing {

struct recorded_request {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct scripted_response {
  int status = 200;
  std::string body;
  std::map<std::string, std::string> headers;
  std::chrono::milliseconds delay{0};  // before answering
  // No answer until the server is destroyed: the client's own timeout is then the only way out, so a timeout
  // test holds however slowly the machine runs.
  bool hold = false;
};

// Serves one connection at a time until destroyed; when the script runs out it repeats `fallback`.
class fake_http_server {
 public:
  fake_http_server() : acceptor_(io_, {boost::asio::ip::make_address("127.0.0.1"), 0}) {
    thread_ = std::thread([this] { serve(); });
  }
  ~fake_http_server() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    released_.notify_all();
    boost::system::error_code ec;
    // Wake the blocking accept with one connection of our own.
    boost::asio::io_context io;
    boost::asio::ip::tcp::socket s(io);
    s.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  fake_http_server(const fake_http_server&) = delete;
  fake_http_server& operator=(const fake_http_server&) = delete;

  unsigned short port() const { return acceptor_.local_endpoint().port(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port()); }

  void push(scripted_response r) {
    std::lock_guard lock(mutex_);
    script_.push_back(std::move(r));
  }
  void set_fallback(scripted_response r) {
    std::lock_guard lock(mutex_);
    fallback_ = std::move(r);
  }
  std::vector<recorded_request> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    namespace http = boost::beast::http;
    while (!stopping_) {
      boost::asio::ip::tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stopping_) break;
      boost::beast::flat_buffer buffer;
      // Keep-alive: answer requests on this connection until the client closes it.
      while (!stopping_) {
        http::request<http::string_body> req;
        http::read(socket, buffer, req, ec);
        if (ec) break;
        recorded_request rec;
        rec.method = std::string(req.method_string());
        rec.target = std::string(req.target());
        for (const auto& f : req) {
          std::string name(f.name_string());
          for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          rec.headers[name] = std::string(f.value());
        }
        rec.body = req.body();
        scripted_response answer;
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(std::move(rec));
          if (!script_.empty()) {
            answer = std::move(script_.front());
            script_.pop_front();
          } else {
            answer = fallback_;
          }
        }
        if (answer.hold) {
          std::unique_lock lock(mutex_);
          released_.wait(lock, [this] { return stopping_.load(); });
        } else if (answer.delay.count() > 0) {
          std::this_thread::sleep_for(answer.delay);
        }
        http::response<http::string_body> res{static_cast<http::status>(answer.status), req.version()};
        res.set(http::field::content_type, "application/json");
        for (const auto& [k, v] : answer.headers) res.set(k, v);
        res.body() = answer.body;
        res.keep_alive(req.keep_alive());
        res.prepare_payload();
        http::write(socket, res, ec);
        if (ec || !res.keep_alive()) break;
      }
      socket.shutdown(boost::asio::ip::tcp::socket::shutdown_both, ec);
    }
  }

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::condition_variable released_;  // a held answer waits here until the server stops
  std::deque<scripted_response> script_;
  scripted_response fallback_{500, R"({"error":{"message":"script exhausted"}})", {}, {}};
  std::vector<recorded_request> requests_;
};

}  // namespace rnx::testing
