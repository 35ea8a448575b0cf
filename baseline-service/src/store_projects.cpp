// The store's projects and their webhooks (tokens are in store_tokens.cpp).
#include "rnx/service/store.hpp"

#include "rnx/common/text.hpp"
#include "store_statement.hpp"

namespace rnx::store {

void database::validate_project_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 64 && name.front() != '.' && name.front() != '-';
  for (char c : name) {
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                c == '-');
  }
  if (!ok) {
    throw error(errc::bad_input, "project name \"" + message_shown(name, 64) +
                                     "\" is not valid: use 1-64 characters of letters, digits, '.', '_' and '-', "
                                     "not starting with '.' or '-'");
  }
}

project_info database::create_project(std::string_view name) {
  validate_project_name(name);
  std::lock_guard lock(mutex_);
  project_info info{0, std::string(name), now_text()};
  auto& st = prepare("INSERT INTO projects (name, created_at) VALUES (?1, ?2)");
  st.bind(1, name).bind(2, std::string_view(info.created_at));
  try {
    st.run();
  } catch (const error& e) {
    if (e.code() == errc::conflict) {
      throw error(errc::conflict, "project \"" + std::string(name) + "\" already exists");
    }
    throw;
  }
  info.id = sqlite3_last_insert_rowid(db_);
  return info;
}

project_info database::project_from_row(statement& st) {
  return {st.integer(0), st.text(1), st.text(2), st.integer(3) != 0};
}

std::optional<project_info> database::find_project(std::string_view name) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT id, name, created_at, public FROM projects WHERE name = ?1");
  st.bind(1, name);
  if (!st.step()) return std::nullopt;
  auto info = project_from_row(st);
  st.restart();
  return info;
}

std::optional<project_info> database::find_project(std::int64_t id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT id, name, created_at, public FROM projects WHERE id = ?1");
  st.bind(1, id);
  if (!st.step()) return std::nullopt;
  auto info = project_from_row(st);
  st.restart();
  return info;
}

void database::set_project_public(std::string_view name, bool is_public) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("UPDATE projects SET public = ?1 WHERE name = ?2");
  st.bind(1, std::int64_t{is_public ? 1 : 0}).bind(2, name).run();
  if (sqlite3_changes(db_) == 0) throw error(errc::not_found, "project \"" + std::string(name) + "\" does not exist");
}

project_info database::ensure_project(std::string_view name) {
  if (auto found = find_project(name)) return *found;
  try {
    return create_project(name);
  } catch (const error& e) {
    // Another process created it between the two calls.
    if (e.code() != errc::conflict) throw;
    if (auto found = find_project(name)) return *found;
    throw;
  }
}

webhook database::add_webhook(std::int64_t project_id, std::string_view url, webhook_format format) {
  if (!(url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0)) {
    throw error(errc::bad_input, "webhook URL \"" + std::string(url) + "\" must start with http:// or https://");
  }
  std::string now = now_text();
  std::lock_guard lock(mutex_);
  auto& st = prepare("INSERT INTO webhooks (project_id, url, format, created_at) VALUES (?1, ?2, ?3, ?4)");
  st.bind(1, project_id).bind(2, url).bind(3, to_string(format)).bind(4, std::string_view(now)).run();
  return {sqlite3_last_insert_rowid(db_), project_id, std::string(url), format};
}

std::vector<webhook> database::webhooks(std::int64_t project_id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT id, project_id, url, format FROM webhooks WHERE project_id = ?1 ORDER BY id");
  st.bind(1, project_id);
  std::vector<webhook> out;
  while (st.step()) {
    out.push_back({st.integer(0), st.integer(1), st.text(2),
                   webhook_format_from_string(st.text(3)).value_or(webhook_format::generic)});
  }
  return out;
}

void database::log_delivery(const delivery_record& r) {
  std::string now = r.created_at.empty() ? now_text() : r.created_at;
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "INSERT INTO webhook_deliveries (webhook_id, run_id, attempt, ok, http_status, error, created_at) "
      "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)");
  st.bind(1, r.webhook_id).bind(2, r.run_id).bind(3, std::int64_t{r.attempt}).bind(4, std::int64_t{r.ok ? 1 : 0});
  st.bind(5, std::int64_t{r.http_status}).bind(6, std::string_view(r.error)).bind(7, std::string_view(now)).run();
}

std::vector<delivery_record> database::deliveries(std::int64_t webhook_id) {
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT id, webhook_id, run_id, attempt, ok, http_status, error, created_at FROM webhook_deliveries "
      "WHERE webhook_id = ?1 ORDER BY id");
  st.bind(1, webhook_id);
  std::vector<delivery_record> out;
  while (st.step()) {
    out.push_back({st.integer(0), st.integer(1), st.integer(2), static_cast<int>(st.integer(3)), st.integer(4) != 0,
                   static_cast<int>(st.integer(5)), st.text(6), st.text(7)});
  }
  return out;
}

}  // namespace rnx::store
