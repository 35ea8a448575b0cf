// rnx-server: `serve` runs the verdict service; `admin` manages the database, `health` probes a server (admin.cpp).
#include "admin.hpp"

#include "rnx/common/error.hpp"
#include "rnx/common/program_exit.hpp"
#include "rnx/service/api.hpp"
#include "rnx/service/notifier.hpp"
#include "rnx/service/server.hpp"
#include "rnx/service/store.hpp"

#include <CLI/CLI.hpp>

#include <csignal>
#include <iostream>
#include <thread>

namespace {

struct serve_flags {
  std::string db;
  std::string listen = "127.0.0.1:8722";
  int threads = static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  std::string tls_cert;
  std::string tls_key;
  std::size_t body_limit = 16u << 20;
  std::size_t max_connections = 512;
  std::size_t max_connections_per_address = 64;
  std::size_t max_unauthenticated_connections = 0;  // not given: half of max_connections
  std::size_t max_unauthenticated = 64;
  std::size_t max_connections_per_token = rnx::service::admission_limits{}.max_connections_per_token;
  std::size_t max_connections_per_project = rnx::service::admission_limits{}.max_connections_per_project;
  double idle_timeout_s = 5;
  double header_timeout_s = 10;
  double read_timeout_s = 30;
  double write_timeout_s = 30;
  std::string synchronous = "full";
  int webhook_attempts = 3;
  double webhook_timeout_s = 5;
  double webhook_backoff_s = 0.5;
  double shard_timeout_s = 3600;
};

std::pair<std::string, unsigned short> split_listen(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    throw rnx::error(rnx::errc::usage, "--listen \"" + listen + "\" must be HOST:PORT, e.g. 127.0.0.1:8722");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(listen.substr(colon + 1), &used);
    if (used != listen.size() - colon - 1) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535) {
    throw rnx::error(rnx::errc::usage, "--listen \"" + listen + "\": the port must be 0-65535 (0 = any free port)");
  }
  return {host, static_cast<unsigned short>(port)};
}

int serve(const serve_flags& f) {
  if (f.synchronous != "full" && f.synchronous != "normal") {
    throw rnx::error(rnx::errc::usage, "--synchronous must be \"full\" or \"normal\"");
  }
  rnx::store::open_options db_options;
  db_options.synchronous_full = f.synchronous == "full";
  rnx::store::database db(f.db, db_options);
  rnx::service::metrics metrics;
  rnx::service::notifier_options notify_options;
  notify_options.attempts = f.webhook_attempts;
  notify_options.timeout = std::chrono::milliseconds(static_cast<long>(f.webhook_timeout_s * 1000));
  notify_options.first_backoff = std::chrono::milliseconds(static_cast<long>(f.webhook_backoff_s * 1000));
  rnx::service::notifier notify(db, metrics, notify_options);
  rnx::service::api_options api_options;
  api_options.shard_timeout = std::chrono::seconds(static_cast<long>(f.shard_timeout_s));
  rnx::service::api api(db, metrics, &notify, api_options);

  rnx::service::server_options options;
  std::tie(options.host, options.port) = split_listen(f.listen);
  options.threads = f.threads;
  options.body_limit = f.body_limit;
  options.admission.max_connections = f.max_connections;
  options.admission.max_connections_per_address = f.max_connections_per_address;
  options.admission.max_unauthenticated_connections = f.max_unauthenticated_connections;
  options.admission.max_unauthenticated_requests = f.max_unauthenticated;
  options.admission.max_connections_per_token = f.max_connections_per_token;
  options.admission.max_connections_per_project = f.max_connections_per_project;
  options.admission.idle_timeout = std::chrono::milliseconds(static_cast<long>(f.idle_timeout_s * 1000));
  options.header_timeout = std::chrono::milliseconds(static_cast<long>(f.header_timeout_s * 1000));
  options.read_timeout = std::chrono::milliseconds(static_cast<long>(f.read_timeout_s * 1000));
  options.write_timeout = std::chrono::milliseconds(static_cast<long>(f.write_timeout_s * 1000));
  options.tls_cert = f.tls_cert;
  options.tls_key = f.tls_key;
  rnx::service::server server(api, metrics, options);
  server.handle_signals();
  server.start();
  // Scripts and tests read this line to learn the port when --listen asked for port 0.
  std::cout << "rnx-server: listening on " << (options.tls_cert.empty() ? "http" : "https") << "://" << options.host
            << ":" << server.port() << " (database " << f.db << ", " << options.threads << " threads)" << std::endl;
  server.wait();
  std::cout << "rnx-server: stopped" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // A peer (or the reader of stdout) that went away must be an error code on that write, not a dead server.
  std::signal(SIGPIPE, SIG_IGN);
  CLI::App app{"rnx-server: the rnx verdict service (runs, baselines, verdicts over HTTP)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "rnx-server 0.1.0");

  serve_flags flags;
  auto* serve_cmd = app.add_subcommand("serve", "Run the HTTP service");
  serve_cmd->add_option("--db", flags.db, "SQLite database file (created if missing; or set RNX_DB)")
      ->envname("RNX_DB")
      ->required();
  serve_cmd->add_option("--listen", flags.listen, "HOST:PORT to listen on (port 0 = any free port)")
      ->capture_default_str();
  serve_cmd
      ->add_option("--threads", flags.threads,
                   "threads for network I/O, and as many again answering requests (in arrival order)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  serve_cmd->add_option("--tls-cert", flags.tls_cert, "PEM certificate chain (enables HTTPS)");
  serve_cmd->add_option("--tls-key", flags.tls_key, "PEM private key");
  serve_cmd->add_option("--body-limit", flags.body_limit, "Largest request body in bytes")
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 32))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-connections", flags.max_connections,
                   "Open connections at most (those of clients without a valid token included)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  auto* unauthenticated_connections =
      serve_cmd
          ->add_option("--max-unauthenticated-connections", flags.max_unauthenticated_connections,
                       "Open connections not held under a valid token, at most (every new one counts until a "
                       "request with a valid token); when full, the one waiting longest for a request is closed. "
                       "The rest of --max-connections is the reserve for connections held under tokens, capped per "
                       "token and per project (default: half of --max-connections)")
          ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  serve_cmd
      ->add_option("--max-connections-per-address", flags.max_connections_per_address,
                   "Open connections from one client address beyond which its new ones are closed")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-unauthenticated", flags.max_unauthenticated,
                   "Requests without a token being read or answered at once (GET /healthz not counted); more get 503 "
                   "with Retry-After")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-connections-per-token", flags.max_connections_per_token,
                   "Connections held under one token at most; a request with that token on one more gets 429 with "
                   "Retry-After and its connection is closed")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--max-connections-per-project", flags.max_connections_per_project,
                   "Connections held under one project's tokens at most (all its tokens together); one more gets 429 "
                   "with Retry-After and is closed")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--idle-timeout", flags.idle_timeout_s,
                   "Seconds a kept-alive connection may wait for its next request before it is closed (token or not)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--header-timeout", flags.header_timeout_s,
                   "Seconds a client has to send a request's line and headers (and to start one on an idle connection)")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd->add_option("--read-timeout", flags.read_timeout_s, "Seconds a client has to send a request's body")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd->add_option("--write-timeout", flags.write_timeout_s, "Seconds a client has to take one response")
      ->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  serve_cmd
      ->add_option("--synchronous", flags.synchronous,
                   "full: fsync every commit (survives power loss); normal: survives process crashes only")
      ->check(CLI::IsMember({"full", "normal"}))
      ->capture_default_str();
  serve_cmd
      ->add_option("--shard-timeout", flags.shard_timeout_s,
                   "Seconds after a run group's first shard before its verdict is formed without the missing "
                   "shards (named, WARN)")
      ->check(CLI::Range(0.0, 7 * 86400.0))
      ->capture_default_str();
  serve_cmd->add_option("--webhook-attempts", flags.webhook_attempts, "Delivery attempts per webhook and event")
      ->check(CLI::Range(1, 20))
      ->capture_default_str();
  serve_cmd->add_option("--webhook-timeout", flags.webhook_timeout_s, "Seconds per webhook HTTP phase")
      ->check(CLI::Range(0.1, 300.0))
      ->capture_default_str();
  serve_cmd->add_option("--webhook-backoff", flags.webhook_backoff_s, "Seconds before the first retry (doubles)")
      ->check(CLI::Range(0.0, 300.0))
      ->capture_default_str();

  rnx::service::admin_commands admin(app);

  int code = 0;
  try {
    app.parse(argc, argv);
    if (serve_cmd->parsed()) {
      if (unauthenticated_connections->count() == 0) {
        flags.max_unauthenticated_connections = std::max<std::size_t>(1, flags.max_connections / 2);
      }
      code = serve(flags);
    } else if (admin.parsed()) {
      code = admin.run();
    }
  } catch (const CLI::ParseError& e) {
    int exit = app.exit(e);
    return exit == 0 ? 0 : 2;
  } catch (...) {
    return rnx::failure_exit_code("rnx-server");
  }
  return code;
}
