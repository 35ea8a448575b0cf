// The store's API tokens: created scoped and kept as SHA-256 digests, listed without secrets, revoked, rotated.
#include "rnx/service/store.hpp"

#include "rnx/common/text.hpp"
#include "store_statement.hpp"

#include <array>
#include <ctime>

namespace rnx::store {

using detail::random_hex;
using detail::sha256_raw;
using detail::transaction;

namespace {
constexpr const char* scope_choices =
    "upload (CI on pull requests: pull-request runs and verdicts), baseline (CI on a protected branch: push runs, "
    "which become its baseline, and what upload may), accept (accepting baselines and push runs) or admin (all)";
}  // namespace

std::string_view to_string(token_scope scope) {
  switch (scope) {
    case token_scope::upload: return "upload";
    case token_scope::baseline: return "baseline";
    case token_scope::accept: return "accept";
    case token_scope::admin: return "admin";
    case token_scope::legacy: return "legacy";
  }
  return "legacy";
}

token_scope parse_token_scope(std::string_view text) {
  for (auto s :
       {token_scope::upload, token_scope::baseline, token_scope::accept, token_scope::admin, token_scope::legacy}) {
    if (to_string(s) == text) return s;
  }
  throw error(errc::usage, "token scope \"" + std::string(text) + "\" is not one of " + scope_choices);
}

std::string_view to_string(token_action action) {
  switch (action) {
    case token_action::upload_pull_request_run: return "upload a pull-request run";
    case token_action::ask_verdict: return "ask for a verdict";
    case token_action::move_baseline: return "upload a push run (it becomes the branch's baseline)";
    case token_action::accept_run: return "accept a run as a baseline";
  }
  return "act";
}

std::string_view identifier(token_action action) {
  switch (action) {
    case token_action::upload_pull_request_run: return "upload_pull_request_run";
    case token_action::ask_verdict: return "ask_verdict";
    case token_action::move_baseline: return "move_baseline";
    case token_action::accept_run: return "accept_run";
  }
  return "unknown";
}

bool scope_allows(token_scope scope, token_action action) {
  switch (scope) {
    case token_scope::admin:
    case token_scope::legacy: return true;
    case token_scope::upload:
      return action == token_action::upload_pull_request_run || action == token_action::ask_verdict;
    case token_scope::baseline: return action != token_action::accept_run;
    case token_scope::accept: return action == token_action::accept_run || action == token_action::move_baseline;
  }
  return false;
}

std::string scopes_allowing(token_action action) {
  std::vector<std::string_view> names;
  for (auto s : {token_scope::upload, token_scope::baseline, token_scope::accept, token_scope::admin}) {
    if (scope_allows(s, action)) names.push_back(to_string(s));
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

namespace {

constexpr std::size_t public_id_length = 12;

// The public id of a token of the shape rnx_<12 hex>_<48 hex>; nothing for any other text.
std::optional<std::string_view> token_public_id(std::string_view token) {
  if (token.size() != 4 + public_id_length + 1 + 48 || token.substr(0, 4) != "rnx_" ||
      token[4 + public_id_length] != '_') {
    return std::nullopt;
  }
  return token.substr(4, public_id_length);
}

// What a presented token is looked up by: its public id, the digest its stored one must equal, and the time its
// expiry is judged at. Nothing for text not shaped like a token of ours.
struct token_probe {
  std::string_view public_id;
  std::array<unsigned char, 32> digest;
  std::string now;
};

std::optional<token_probe> probe_of(std::string_view token, std::string now) {
  const std::optional<std::string_view> public_id = token_public_id(token);
  if (!public_id) return std::nullopt;
  return token_probe{*public_id, sha256_raw(token), std::move(now)};
}

// A stored digest against a token's, in constant time.
template <typename Digest>
bool same_digest(const std::string& stored, const Digest& digest) {
  return stored.size() == digest.size() && CRYPTO_memcmp(stored.data(), digest.data(), digest.size()) == 0;
}

void require_creatable(token_scope scope) {
  if (scope == token_scope::legacy) {
    throw error(errc::usage, std::string("a new token cannot have the legacy scope (it marks tokens made before "
                                         "scopes existed); give one of ") +
                                 scope_choices);
  }
}

// A token's public id from what an operator typed: the id `admin token list` shows, "rnx_<id>" or the whole
// token (rnx_<id>_<secret>; only its public part is used, and never echoed back).
std::string public_id_of(std::string_view which) {
  std::string_view id = which;
  if (id.substr(0, 4) == "rnx_") id.remove_prefix(4);
  if (id.size() > public_id_length && id[public_id_length] == '_') id = id.substr(0, public_id_length);
  bool ok = id.size() == public_id_length;
  for (char c : id) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) {
    throw error(errc::usage, "\"" + message_shown(which, 16) + (which.size() > 16 ? "..." : "") +
                                 "\" does not name a token: give its id as `rnx-server admin token list` shows it "
                                 "(12 hex characters) or the whole token");
  }
  return std::string(id);
}

}  // namespace

#define RNX_TOKEN_COLUMNS \
  "t.id, t.public_id, p.name, t.label, t.scope, t.created_at, t.revoked, t.revoked_at, t.expires_at, t.project_id"

token_record database::token_from_row(statement& st) {
  token_record t;
  t.id = st.integer(0);
  t.public_id = st.text(1);
  t.project = st.text(2);
  t.label = st.text(3);
  t.scope = parse_token_scope(st.text(4));
  t.created_at = st.text(5);
  t.revoked = st.integer(6) != 0;
  t.revoked_at = st.text(7);
  t.expires_at = st.text(8);
  t.project_id = st.integer(9);
  return t;
}

token_grant database::insert_token(const project_info& project, std::string_view label, token_scope scope) {
  // The public id lets authenticate() find the row without comparing secrets in SQL.
  std::string public_id = random_hex(public_id_length / 2);
  std::string token = "rnx_" + public_id + "_" + random_hex(24);
  auto digest = sha256_raw(token);
  auto& st = prepare(
      "INSERT INTO tokens (project_id, public_id, digest, label, created_at, scope) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  std::string now = now_text();
  st.bind(1, project.id).bind(2, std::string_view(public_id)).bind_blob(3, digest.data(), digest.size());
  st.bind(4, label).bind(5, std::string_view(now)).bind(6, to_string(scope)).run();
  return {sqlite3_last_insert_rowid(db_), project.name, std::string(label), scope, token};
}

token_grant database::create_token(std::string_view project, std::string_view label, token_scope scope) {
  require_creatable(scope);
  auto found = find_project(project);
  if (!found) {
    throw error(errc::not_found, "project \"" + std::string(project) +
                                     "\" does not exist; create it first with `rnx-server admin project create " +
                                     std::string(project) + " --db " + path_.string() + "`");
  }
  std::lock_guard lock(mutex_);
  return insert_token(*found, label, scope);
}

std::optional<auth_result> database::authenticate(std::string_view token) {
  const std::optional<token_probe> probe = probe_of(token, now_text());
  if (!probe) return std::nullopt;
  std::lock_guard lock(mutex_);
  // Read on every request, never cached: a revocation by `rnx-server admin token revoke` (another process,
  // the same file) holds from the very next request.
  auto& st = prepare(
      "SELECT t.id, t.project_id, p.name, t.label, t.digest, t.scope FROM tokens t JOIN projects p ON p.id = "
      "t.project_id "
      "WHERE t.public_id = ?1 AND t.revoked = 0 AND (t.expires_at IS NULL OR t.expires_at > ?2)");
  st.bind(1, probe->public_id).bind(2, std::string_view(probe->now));
  if (!st.step()) return std::nullopt;
  std::string stored = st.blob(4);
  auth_result result{st.integer(0), st.integer(1), st.text(2), st.text(3), parse_token_scope(st.text(5))};
  st.restart();
  if (!same_digest(stored, probe->digest)) return std::nullopt;
  return result;
}

std::optional<expired_token> database::find_expired(std::string_view token) {
  const std::optional<token_probe> probe = probe_of(token, now_text());
  if (!probe) return std::nullopt;
  std::lock_guard lock(mutex_);
  auto& st = prepare(
      "SELECT p.name, t.expires_at, t.digest FROM tokens t JOIN projects p ON p.id = t.project_id "
      "WHERE t.public_id = ?1 AND t.revoked = 0 AND t.expires_at IS NOT NULL AND t.expires_at <= ?2");
  st.bind(1, probe->public_id).bind(2, std::string_view(probe->now));
  if (!st.step()) return std::nullopt;
  expired_token out{st.text(0), st.text(1)};
  std::string stored = st.blob(2);
  st.restart();
  if (!same_digest(stored, probe->digest)) return std::nullopt;
  return out;
}

std::vector<token_record> database::list_tokens(std::optional<std::string_view> project) {
  if (project && !find_project(*project)) {
    throw error(errc::not_found, "project \"" + std::string(*project) + "\" does not exist in " + path_.string());
  }
  std::lock_guard lock(mutex_);
  auto& st = prepare("SELECT " RNX_TOKEN_COLUMNS
                     " FROM tokens t JOIN projects p ON p.id = t.project_id WHERE (?1 IS NULL OR p.name = ?1) "
                     "ORDER BY t.id");
  st.bind(1, project ? std::optional<std::string_view>(*project) : std::nullopt);
  std::vector<token_record> out;
  while (st.step()) out.push_back(token_from_row(st));
  return out;
}

token_record database::find_token_locked(std::string_view which) {
  std::string public_id = public_id_of(which);
  auto& st = prepare("SELECT " RNX_TOKEN_COLUMNS
                     " FROM tokens t JOIN projects p ON p.id = t.project_id WHERE t.public_id = ?1");
  st.bind(1, std::string_view(public_id));
  if (!st.step()) {
    throw error(errc::not_found, "no token has the id " + public_id + " in " + path_.string() +
                                     "; `rnx-server admin token list --db " + path_.string() + "` shows them");
  }
  auto record = token_from_row(st);
  st.restart();
  if (record.revoked) {
    throw error(errc::conflict, "token " + public_id + " (project " + record.project + ", label \"" + record.label +
                                    "\") was revoked already" +
                                    (record.revoked_at.empty() ? "" : " at " + record.revoked_at));
  }
  return record;
}

token_record database::revoke_token(std::string_view which) {
  std::lock_guard lock(mutex_);
  transaction tx(db_);
  auto record = find_token_locked(which);
  record.revoked = true;
  record.revoked_at = now_text();
  prepare("UPDATE tokens SET revoked = 1, revoked_at = ?2 WHERE id = ?1")
      .bind(1, record.id)
      .bind(2, std::string_view(record.revoked_at))
      .run();
  tx.commit();
  return record;
}

database::rotation database::rotate_token(std::string_view which, std::chrono::seconds grace,
                                          std::optional<token_scope> scope) {
  if (grace.count() < 0) throw error(errc::usage, "the grace period cannot be negative");
  if (scope) require_creatable(*scope);
  std::lock_guard lock(mutex_);
  transaction tx(db_);
  rotation out;
  out.old = find_token_locked(which);
  if (!out.old.expires_at.empty()) {
    throw error(errc::conflict, "token " + out.old.public_id + " was rotated already (it stops working at " +
                                    out.old.expires_at + "); rotate its replacement, or revoke it to end it now");
  }
  token_scope new_scope = scope.value_or(out.old.scope);
  if (new_scope == token_scope::legacy) {
    throw error(errc::usage, "token " + out.old.public_id +
                                 " has no scope (it was made before scopes existed); give the replacement one with "
                                 "--scope upload|baseline|accept|admin");
  }
  out.replacement = insert_token(project_info{out.old.project_id, out.old.project, ""}, out.old.label, new_scope);
  const auto now = this->now();
  if (grace.count() == 0) {
    out.old.revoked = true;
    out.old.revoked_at = detail::stored_time(now);
    prepare("UPDATE tokens SET revoked = 1, revoked_at = ?2 WHERE id = ?1")
        .bind(1, out.old.id)
        .bind(2, std::string_view(out.old.revoked_at))
        .run();
  } else {
    out.old.expires_at = detail::stored_time(now + grace);
    prepare("UPDATE tokens SET expires_at = ?2 WHERE id = ?1")
        .bind(1, out.old.id)
        .bind(2, std::string_view(out.old.expires_at))
        .run();
  }
  tx.commit();
  return out;
}

}  // namespace rnx::store
