// Helpers for the service tests: temp folders, synthetic run documents, a real rnx-server child process,
// raw sockets for malformed requests, and a local HTTP server that records what it receives.
#pragma once

#include "rnx/common/json.hpp"
#include "rnx/common/process.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/service/store.hpp"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <poll.h>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace rnx::test {

namespace fs = std::filesystem;

// A fresh folder under the system temp dir, removed with everything in it.
class temp_dir {
 public:
  temp_dir() {
    std::string pattern = (fs::temp_directory_path() / "rnx-service-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Asks `ready` until it holds: for state the server reaches on threads of its own (a background check stored, a
// slot freed, a delivery logged). No wall-clock bound of its own, so a loaded machine cannot fail a test here; the
// test's ctest TIMEOUT bounds the wait. The pause is how often to look, not how long to wait.
template <typename Ready>
void wait_until(Ready&& ready) {
  while (!ready()) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

struct run_spec {
  std::string project = "demo";
  std::string branch = "main";
  std::string base_branch = "main";
  std::optional<std::int64_t> pull_request;
  std::string commit = "c0ffee";
  std::string env_id = "env-a";
  int kernels = 2;
  int batches = 2;  // configurations = kernels * batches
  int samples = 30;
  double scale = 1.0;    // multiplies every time: 1.2 is a 20% slowdown
  double noise = 0.005;  // relative standard deviation of the synthetic timings
  unsigned seed = 1;
};

// SQL that takes a store back from schema version 8 to the version 7 layout (the results' statistic interval and
// unstable flag dropped, the older index restored), for the migration tests of every older version; it leaves the
// schema_version rows to the caller.
inline constexpr const char* undo_schema_8 =
    "DROP INDEX results_by_config; ALTER TABLE results DROP COLUMN stat_lo_ms; "
    "ALTER TABLE results DROP COLUMN stat_hi_ms; ALTER TABLE results DROP COLUMN unstable; "
    "ALTER TABLE results DROP COLUMN unstable_reason; CREATE INDEX results_by_config ON results "
    "(kernel, runtime, dtype, batch, run_id, status, median_ms, lo_ms, hi_ms, n); ";

// A valid rnx.run/v1 document with deterministic pseudo-random timings.
inline run_document make_run(const run_spec& s) {
  run_document run;
  run.project = s.project;
  run.commit = s.commit;
  run.branch = s.branch;
  run.base_branch = s.base_branch;
  run.pull_request = s.pull_request;
  run.created_at = "2026-12-02T10:00:00Z";
  run.env.env_id = s.env_id;
  run.env.device = "cpu";
  run.env.cpu = s.env_id;  // another env_id is another machine
  run.env.threads = 2;
  std::mt19937 rng(s.seed);
  std::normal_distribution<double> noise(0.0, s.noise);
  for (int k = 0; k < s.kernels; ++k) {
    for (int b = 0; b < s.batches; ++b) {
      run_result r;
      r.kernel = "kernel" + std::to_string(k);
      r.runtime = "eager";
      r.dtype = "float32";
      r.batch = std::int64_t{1} << (b * 2);
      r.device = "cpu";
      double base_ms = 1.0 + k + 0.5 * b;
      for (int i = 0; i < s.samples; ++i) r.samples_ms.push_back(base_ms * s.scale * (1.0 + noise(rng)));
      run.results.push_back(std::move(r));
    }
  }
  return run;
}

// The env_id rnx-server accepts for the environment of run_spec{.env_id = name}: the hash of its fields. Runs stored
// through the store directly (embedded mode) keep the name itself.
inline std::string env_id_of(const std::string& name) {
  run_spec s;
  s.env_id = name;
  return compute_env_id(make_run(s).env);
}

// The document as a client uploads it to rnx-server: its env_id is the hash of its environment.
inline std::string run_json(const run_spec& s) {
  run_document run = make_run(s);
  run.env.env_id = compute_env_id(run.env);
  return json::serialize(to_json(run));
}

// Creates the project (if needed) and a token for it directly in the database file (admin: every endpoint).
inline std::string make_token(const std::string& db_path, const std::string& project,
                              const std::string& scope = "admin") {
  store::database db(db_path);
  db.ensure_project(project);
  return db.create_token(project, "test-" + scope, store::parse_token_scope(scope)).token;
}

#ifndef RNX_SERVER_BIN
#error "RNX_SERVER_BIN must name the rnx-server executable"
#endif

// The real rnx-server binary as a child process on 127.0.0.1 with an OS-assigned port.
class server_process {
 public:
  explicit server_process(const std::string& db_path, std::vector<std::string> extra = {}) {
    int fds[2];
    int err[2];
    if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
    if (pipe(err) != 0) throw std::runtime_error("pipe failed");
    std::vector<std::string> args = {RNX_SERVER_BIN, "serve",       "--db",      db_path,
                                     "--listen",     "127.0.0.1:0", "--threads", "2"};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      dup2(fds[1], 1);
      dup2(err[1], 2);
      close(fds[0]);
      close(fds[1]);
      close(err[0]);
      close(err[1]);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    close(err[1]);
    out_fd_ = fds[0];
    log_reader_ = std::thread([this, fd = err[0]] { read_log(fd); });
    std::string line = read_line(std::chrono::seconds(30));
    auto colon = line.rfind(':', line.find(" (database"));
    if (line.find("listening on") == std::string::npos || colon == std::string::npos) {
      stop();
      throw std::runtime_error("rnx-server did not start: \"" + line + "\"");
    }
    try {
      port_ = static_cast<unsigned short>(std::stoi(line.substr(colon + 1)));
    } catch (const std::exception&) {
      stop();
      throw std::runtime_error("rnx-server's first line names no port: \"" + line + "\"");
    }
    scheme_ = line.find("https://") != std::string::npos ? "https" : "http";
  }
  ~server_process() { stop(); }
  server_process(const server_process&) = delete;
  server_process& operator=(const server_process&) = delete;

  unsigned short port() const { return port_; }
  std::string url(const std::string& path = "") const {
    return scheme_ + "://127.0.0.1:" + std::to_string(port_) + path;
  }
  pid_t pid() const { return pid_; }

  // Blocks until the server has written a line to its log (stderr) that contains `text`, and returns it: the
  // event a test waits on where the server finishes work on threads of its own (a background check done). No
  // wall-clock bound: the test's ctest TIMEOUT bounds it. Lines are kept from the start, so one written before the
  // call counts; every line is also passed on to this test's stderr.
  std::string wait_for_log(const std::string& text) {
    std::unique_lock lock(log_mutex_);
    std::string found;
    log_changed_.wait(lock, [&] {
      for (const auto& line : log_) {
        if (line.find(text) != std::string::npos) {
          found = line;
          return true;
        }
      }
      if (log_closed_) throw std::runtime_error("rnx-server's log ended without a line containing \"" + text + "\"");
      return false;
    });
    return found;
  }

  // SIGKILL: no chance to flush or clean up, the way a crash or OOM kill ends a process.
  void kill_hard() { end(SIGKILL); }
  void stop() { end(SIGTERM); }

  bool alive() const {
    if (pid_ <= 0) return false;
    return waitpid(pid_, nullptr, WNOHANG) == 0;
  }

 private:
  void end(int sig) {
    if (pid_ > 0) {
      kill(pid_, sig);
      int status = 0;
      waitpid(pid_, &status, 0);
      pid_ = -1;
    }
    if (out_fd_ >= 0) {
      close(out_fd_);
      out_fd_ = -1;
    }
    if (log_reader_.joinable()) log_reader_.join();  // the server is gone: its end of the pipe is closed
  }

  void read_log(int fd) {
    std::string line;
    char buffer[4096];
    for (ssize_t n; (n = read(fd, buffer, sizeof buffer)) != 0;) {
      if (n < 0) {
        if (errno == EINTR) continue;
        break;
      }
      std::fwrite(buffer, 1, static_cast<std::size_t>(n), stderr);
      for (ssize_t i = 0; i < n; ++i) {
        if (buffer[i] != '\n') {
          line += buffer[i];
          continue;
        }
        {
          std::lock_guard lock(log_mutex_);
          log_.push_back(std::move(line));
        }
        line.clear();
        log_changed_.notify_all();
      }
    }
    close(fd);
    {
      std::lock_guard lock(log_mutex_);
      log_closed_ = true;
    }
    log_changed_.notify_all();
  }

  std::string read_line(std::chrono::milliseconds timeout) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char c = 0;
      if (read(out_fd_, &c, 1) != 1) break;
      if (c == '\n') return line;
      line += c;
    }
    return line;
  }

  pid_t pid_ = -1;
  int out_fd_ = -1;
  unsigned short port_ = 0;
  std::string scheme_ = "http";
  std::thread log_reader_;
  std::mutex log_mutex_;
  std::condition_variable log_changed_;
  std::vector<std::string> log_;
  bool log_closed_ = false;
};

struct command_result {
  int exit_code = -1;  // -1: killed by a signal or timed out
  std::string out;
  std::string err;
};

// Runs a program to completion through rnx's process helper, capturing stdout and stderr; killed after `timeout`.
inline command_result run_command(const std::vector<std::string>& args,
                                  std::chrono::milliseconds timeout = std::chrono::seconds(60)) {
  process_options options;
  options.what = capture::separately;
  options.timeout = timeout;
  const process_result r = run_process(args, options);
  return {r.timed_out || r.signal != 0 ? -1 : r.exit_code, r.out, r.err};
}

// A self-signed certificate for localhost (and 127.0.0.1 with `ip_names`), made by the openssl command; false when
// openssl is missing or fails.
inline bool make_test_certificate(const std::string& cert, const std::string& key, bool ip_names) {
  std::vector<std::string> argv = {"openssl", "req",  "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                                   key,       "-out", cert,    "-days",   "1",        "-subj",  "/CN=localhost"};
  if (ip_names) {
    argv.push_back("-addext");
    argv.push_back("subjectAltName=IP:127.0.0.1,DNS:localhost");
  }
  try {
    return run_command(argv).exit_code == 0;
  } catch (const std::exception&) {
    return false;
  }
}

// Sends raw bytes to 127.0.0.1:port and returns whatever comes back before the server closes or
// `timeout` passes. For requests no well-behaved client would send.
inline std::string raw_exchange(unsigned short port, const std::string& bytes,
                                std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  namespace asio = boost::asio;
  asio::io_context ioc;
  boost::beast::tcp_stream stream(ioc);
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  stream.expires_after(timeout);
  std::string reply;
  std::vector<char> buffer(64 * 1024);
  // Read while writing: a server may answer (413) before it has taken the whole body.
  std::function<void()> read_more = [&] {
    stream.async_read_some(asio::buffer(buffer), [&](boost::beast::error_code e, std::size_t n) {
      reply.append(buffer.data(), n);
      if (!e) read_more();
    });
  };
  asio::async_write(stream, asio::buffer(bytes), [](boost::beast::error_code, std::size_t) {});
  read_more();
  ioc.run();
  return reply;
}

// A minimal HTTP server on 127.0.0.1 that records each request and answers with scripted statuses
// (then 200 once the script is used up). Used as the webhook receiver and the client's peer.
class recording_server {
 public:
  struct received {
    std::string method;
    std::string target;
    std::string body;
    std::string content_type;
    std::string host;
  };

  // A delay of `no_answer`: no reply until the server is destroyed, so that a client's own timeout is the only way
  // out, however slowly the machine runs.
  static constexpr std::chrono::milliseconds no_answer = std::chrono::milliseconds::max();

  explicit recording_server(std::deque<int> statuses = {}, std::chrono::milliseconds delay = {})
      : acceptor_(ioc_), statuses_(std::move(statuses)), delay_(delay) {
    namespace asio = boost::asio;
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(endpoint.protocol());
    acceptor_.bind(endpoint);
    acceptor_.listen();
    acceptor_.non_blocking(true);
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { serve(); });
  }
  ~recording_server() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    stopped_.notify_all();
    thread_.join();
  }

  unsigned short port() const { return port_; }
  std::string url(const std::string& path = "/hook") const {
    return "http://127.0.0.1:" + std::to_string(port_) + path;
  }
  std::vector<received> requests() {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  // Waits until at least n requests arrived, however long that takes (the test's ctest TIMEOUT bounds it).
  std::vector<received> wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    arrived_.wait(lock, [&] { return requests_.size() >= n; });
    return requests_;
  }

 private:
  void serve() {
    namespace asio = boost::asio;
    namespace bhttp = boost::beast::http;
    while (!stop_) {
      asio::ip::tcp::socket socket(ioc_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        continue;
      }
      boost::beast::flat_buffer buffer;
      bhttp::request<bhttp::string_body> req;
      bhttp::read(socket, buffer, req, ec);
      if (ec) continue;
      int status = 200;
      {
        std::lock_guard lock(mutex_);
        requests_.push_back({std::string(req.method_string()), std::string(req.target()), req.body(),
                             std::string(req[bhttp::field::content_type]), std::string(req[bhttp::field::host])});
        if (!statuses_.empty()) {
          status = statuses_.front();
          statuses_.pop_front();
        }
      }
      arrived_.notify_all();
      if (delay_ == no_answer) {
        std::unique_lock lock(mutex_);
        stopped_.wait(lock, [this] { return stop_.load(); });
      } else if (delay_.count() > 0) {
        std::this_thread::sleep_for(delay_);
      }
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), 11};
      res.set(bhttp::field::content_type, "text/plain");
      res.set("X-Echo-Target", std::string(req.target()));
      res.body() = "recorded " + req.body().substr(0, 32);
      res.keep_alive(false);
      res.prepare_payload();
      bhttp::write(socket, res, ec);
      socket.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
    }
  }

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::mutex mutex_;
  std::condition_variable stopped_;  // a no_answer reply waits here until the server stops
  std::condition_variable arrived_;  // wait_for waits here for requests
  std::vector<received> requests_;
  std::deque<int> statuses_;
  std::chrono::milliseconds delay_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace rnx::test
