// rnx-server's operator commands: `admin` (projects, tokens, webhooks, backups in the database file) and `health`
// (the probe a container HEALTHCHECK or a load balancer runs against a serving rnx-server).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>

namespace rnx::service {

class admin_commands {
 public:
  // Adds the `admin` and `health` subcommands to app.
  explicit admin_commands(CLI::App& app);

  // True when the command line chose one of them.
  bool parsed() const;
  // Runs the chosen command: the exit code; throws rnx::error for bad input.
  int run();

 private:
  int run_token();
  int run_backup();
  int run_webhook();
  int run_health();

  std::string db_path_;
  std::string project_;
  std::string label_ = "ci";
  std::string scope_ = "upload";
  std::string visibility_;
  std::string token_;
  std::int64_t grace_s_ = 0;
  std::string url_;
  std::string format_ = "generic";
  std::string backup_dest_;
  bool overwrite_ = false;
  std::string health_url_ = "http://127.0.0.1:8722/healthz";
  std::string health_ca_file_;
  double health_timeout_s_ = 5;

  CLI::App* admin_ = nullptr;
  CLI::App* project_create_ = nullptr;
  CLI::App* project_visibility_ = nullptr;
  CLI::App* token_create_ = nullptr;
  CLI::App* token_list_ = nullptr;
  CLI::App* token_revoke_ = nullptr;
  CLI::App* token_rotate_ = nullptr;
  CLI::App* webhook_add_ = nullptr;
  CLI::App* webhook_log_ = nullptr;
  CLI::App* backup_ = nullptr;
  CLI::App* health_ = nullptr;
};

}  // namespace rnx::service
