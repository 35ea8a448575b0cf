// rnx-server admin (projects, tokens, webhooks, backups) and rnx-server health (a probe of a serving instance).
#include "admin.hpp"

#include "rnx/common/error.hpp"
#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"
#include "rnx/common/run_document.hpp"
#include "rnx/service/store.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <iostream>
#include <vector>

namespace rnx::service {

namespace {

// Every admin command names the database file; RNX_DB saves typing it (the server image sets it).
void add_db_option(CLI::App* cmd, std::string& path) {
  cmd->add_option("--db", path, "SQLite database file (or set RNX_DB)")->envname("RNX_DB")->required();
}

// The secret each scope's token belongs in (docs/service.md, "Scopes"; the ci-examples read these names).
std::string where_to_keep(store::token_scope scope) {
  switch (scope) {
    case store::token_scope::upload: return "store it as the CI secret RNX_TOKEN (pull-request jobs)";
    case store::token_scope::baseline:
      return "store it as the CI secret RNX_BASELINE_TOKEN, readable by push jobs of the protected branch only";
    case store::token_scope::accept:
      return "store it as the CI secret RNX_ACCEPT_TOKEN (the accept workflow, ci-examples/accept-comment.yml)";
    case store::token_scope::admin: return "keep it with the operators; it is not a CI secret";
    case store::token_scope::legacy: break;
  }
  return "store it as a CI secret";
}

std::string token_status(const store::token_record& t, const std::string& now) {
  if (t.revoked) return t.revoked_at.empty() ? "revoked" : "revoked " + t.revoked_at;
  if (!t.expires_at.empty()) return (t.expires_at > now ? "expires " : "expired ") + t.expires_at;
  return "active";
}

// Aligned columns, the header first; the last column is not padded.
void print_table(std::ostream& out, const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> width;
  for (const auto& row : rows) {
    width.resize(std::max(width.size(), row.size()));
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(width[i] - row[i].size() + 2, ' ');
    }
    out << line << "\n";
  }
}

}  // namespace

admin_commands::admin_commands(CLI::App& app) {
  admin_ = app.add_subcommand("admin", "Manage projects, tokens, webhooks and backups of the database");
  admin_->require_subcommand(1);

  auto* project_cmd = admin_->add_subcommand("project", "Projects")->require_subcommand(1);
  project_create_ = project_cmd->add_subcommand("create", "Create a project");
  project_create_->add_option("name", project_, "Project name (as in rnx.toml [project] name)")->required();
  add_db_option(project_create_, db_path_);
  project_visibility_ = project_cmd->add_subcommand(
      "visibility",
      "public: anyone may read the project's pages and their JSON; private (the default): its tokens only");
  project_visibility_->add_option("name", project_, "Project name")->required();
  project_visibility_->add_option("visibility", visibility_, "public or private")
      ->required()
      ->check(CLI::IsMember({"public", "private"}));
  add_db_option(project_visibility_, db_path_);

  auto* token_cmd = admin_->add_subcommand("token", "API tokens")->require_subcommand(1);
  token_create_ = token_cmd->add_subcommand("create", "Create a token; prints it once, stores only its SHA-256");
  token_create_->add_option("--project", project_, "Project the token may act for")->required();
  token_create_->add_option("--label", label_, "A note on what uses the token")->capture_default_str();
  token_create_
      ->add_option("--scope", scope_,
                   "upload: pull-request runs and verdicts (the CI token of pull requests); baseline: also push runs, "
                   "which become the branch's baseline (the CI token of pushes to a protected branch); accept: "
                   "accepting baselines (a maintainer's or the accept workflow's); admin: all")
      ->check(CLI::IsMember({"upload", "baseline", "accept", "admin"}))
      ->capture_default_str();
  add_db_option(token_create_, db_path_);

  token_list_ = token_cmd->add_subcommand("list", "List tokens: id, project, scope, label, state (never a secret)");
  token_list_->add_option("--project", project_, "Only this project's tokens");
  add_db_option(token_list_, db_path_);

  token_revoke_ = token_cmd->add_subcommand("revoke", "Revoke a token: the next request with it gets 401");
  token_revoke_->add_option("id", token_, "The token's id as `admin token list` shows it (or the whole token)")
      ->required();
  add_db_option(token_revoke_, db_path_);

  token_rotate_ = token_cmd->add_subcommand(
      "rotate", "Replace a token by a new one (same project and label); prints the new one once");
  token_rotate_->add_option("id", token_, "The token's id as `admin token list` shows it (or the whole token)")
      ->required();
  token_rotate_
      ->add_option("--grace", grace_s_,
                   "Seconds the old token keeps working, to swap the CI secret without failed uploads (0: revoked now)")
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{90} * 86400))
      ->capture_default_str();
  token_rotate_
      ->add_option("--scope", scope_, "Scope of the new token (default: the old one's; needed for a legacy token)")
      ->check(CLI::IsMember({"upload", "baseline", "accept", "admin"}));
  add_db_option(token_rotate_, db_path_);

  auto* webhook_cmd = admin_->add_subcommand("webhook", "Regression webhooks")->require_subcommand(1);
  webhook_add_ = webhook_cmd->add_subcommand("add", "Notify URL when a baseline run is slower than the previous");
  webhook_add_->add_option("--project", project_, "Project")->required();
  webhook_add_->add_option("--url", url_, "http:// or https:// URL to POST to")->required();
  webhook_add_->add_option("--format", format_, "Payload shape")
      ->check(CLI::IsMember({"generic", "slack", "teams"}))
      ->capture_default_str();
  add_db_option(webhook_add_, db_path_);
  webhook_log_ = webhook_cmd->add_subcommand("log", "Show the delivery log of a project's webhooks");
  webhook_log_->add_option("--project", project_, "Project")->required();
  add_db_option(webhook_log_, db_path_);

  backup_ = admin_->add_subcommand(
      "backup", "Copy the database to DEST while the server runs (SQLite online backup; temp file + rename)");
  backup_->add_option("dest", backup_dest_, "The backup file to write")->required();
  backup_->add_flag("--overwrite", overwrite_, "Replace DEST if it exists (by default an existing file is refused)");
  add_db_option(backup_, db_path_);

  health_ = app.add_subcommand(
      "health", "Ask a serving rnx-server for /healthz: exit 0 when it answers ok, 1 otherwise (container probes)");
  health_->add_option("--url", health_url_, "The /healthz URL (or set RNX_HEALTH_URL)")
      ->envname("RNX_HEALTH_URL")
      ->capture_default_str();
  health_
      ->add_option("--ca-file", health_ca_file_, "PEM certificate to trust for an https:// URL (or RNX_HEALTH_CA_FILE)")
      ->envname("RNX_HEALTH_CA_FILE");
  health_->add_option("--timeout", health_timeout_s_, "Seconds to wait for the answer")
      ->check(CLI::Range(0.1, 300.0))
      ->capture_default_str();
}

bool admin_commands::parsed() const { return admin_->parsed() || health_->parsed(); }

int admin_commands::run() {
  if (health_->parsed()) return run_health();
  if (project_create_->parsed()) {
    store::database db(db_path_);
    auto p = db.create_project(project_);
    std::cout << "created project " << p.name << " (id " << p.id << ")\n";
    return 0;
  }
  if (project_visibility_->parsed()) {
    store::database db(db_path_);
    db.set_project_public(project_, visibility_ == "public");
    std::cout << "project " << project_ << " is " << visibility_ << "\n";
    return 0;
  }
  if (backup_->parsed()) return run_backup();
  if (webhook_add_->parsed() || webhook_log_->parsed()) return run_webhook();
  return run_token();
}

int admin_commands::run_token() {
  store::database db(db_path_);
  if (token_create_->parsed()) {
    auto grant = db.create_token(project_, label_, store::parse_token_scope(scope_));
    std::cerr << "token for project " << grant.project << " (label " << grant.label << ", "
              << store::to_string(grant.scope) << " scope); it is shown only this once, " << where_to_keep(grant.scope)
              << ":\n";
    std::cout << grant.token << "\n";
  } else if (token_list_->parsed()) {
    auto tokens = db.list_tokens(project_.empty() ? std::nullopt : std::optional<std::string_view>(project_));
    std::string now = utc_now_rfc3339();
    std::vector<std::vector<std::string>> rows{{"ID", "PROJECT", "SCOPE", "LABEL", "CREATED", "STATE"}};
    for (const auto& t : tokens) {
      rows.push_back({t.public_id, t.project, std::string(store::to_string(t.scope)), t.label, t.created_at,
                      token_status(t, now)});
    }
    print_table(std::cout, rows);
    if (tokens.empty()) std::cerr << "no tokens; create one with `rnx-server admin token create --project NAME`\n";
  } else if (token_revoke_->parsed()) {
    auto t = db.revoke_token(token_);
    std::cout << "revoked token " << t.public_id << " (project " << t.project << ", label " << t.label << ", "
              << store::to_string(t.scope) << " scope) at " << t.revoked_at << "; requests with it now get 401\n";
  } else if (token_rotate_->parsed()) {
    bool scope_given = token_rotate_->count("--scope") > 0;
    auto r = db.rotate_token(token_, std::chrono::seconds(grace_s_),
                             scope_given ? std::optional(store::parse_token_scope(scope_)) : std::nullopt);
    std::cerr << "token " << r.old.public_id << " (project " << r.old.project << ", label " << r.old.label
              << ") is replaced by " << store::to_string(r.replacement.scope) << " token "
              << r.replacement.token.substr(4, 12) << "; the old one "
              << (r.old.revoked ? "is revoked now" : "stops working at " + r.old.expires_at)
              << ". The new token is shown only this once; " << where_to_keep(r.replacement.scope) << ":\n";
    std::cout << r.replacement.token << "\n";
  }
  return 0;
}

int admin_commands::run_backup() {
  store::backup_options options;
  options.overwrite = overwrite_;
  auto b = store::backup_database(db_path_, backup_dest_, options);
  auto count = [](std::int64_t n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  std::cout << "backed up " << db_path_ << " to " << b.path.string() << ": " << b.bytes << " bytes, schema version "
            << b.schema_version << ", " << count(b.projects, "project") << ", " << count(b.runs, "run") << "\n";
  return 0;
}

int admin_commands::run_webhook() {
  store::database db(db_path_);
  auto p = db.find_project(project_);
  if (!p) throw error(errc::not_found, "project \"" + project_ + "\" does not exist in " + db_path_);
  if (webhook_add_->parsed()) {
    auto hook = db.add_webhook(p->id, url_, *store::webhook_format_from_string(format_));
    std::cout << "added webhook " << hook.id << " (" << format_ << ") for project " << p->name << "\n";
    return 0;
  }
  for (const auto& hook : db.webhooks(p->id)) {
    std::cout << "webhook " << hook.id << " " << to_string(hook.format) << " " << hook.url << "\n";
    for (const auto& d : db.deliveries(hook.id)) {
      std::cout << "  " << d.created_at << " run " << d.run_id << " attempt " << d.attempt << " "
                << (d.ok ? "ok" : "failed") << " http " << d.http_status << (d.error.empty() ? "" : " " + d.error)
                << "\n";
    }
  }
  return 0;
}

// Exit 1 (not 2) on every failure: a container runtime reads 1 as unhealthy and reserves 2.
int admin_commands::run_health() {
  http::request_options options;
  options.timeout = std::chrono::milliseconds(static_cast<long>(health_timeout_s_ * 1000));
  options.ca_file = health_ca_file_;
  options.max_body = 64 * 1024;
  std::string problem;
  try {
    auto r = http::request("GET", health_url_, {{"Accept", "application/json"}}, {}, options);
    if (r.status != 200) {
      problem = "answered HTTP " + std::to_string(r.status);
    } else {
      auto body = json::parse(r.body, health_url_);
      json::reader reader(body, health_url_);
      if (reader.string("status") != "ok") {
        problem = "status is \"" + reader.string("status") + "\", not \"ok\"";
      } else {
        std::cout << "rnx-server health: ok (" << health_url_ << ", schema version " << reader.integer("schema_version")
                  << ")\n";
        return 0;
      }
    }
  } catch (const error& e) {
    problem = e.what();
  }
  std::cerr << "rnx-server health: " << health_url_ << ": " << problem << "\n";
  return 1;
}

}  // namespace rnx::service
