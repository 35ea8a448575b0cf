// Operating rnx-server: the token lifecycle (list, revoke, rotate) and online backups through the real
// `rnx-server admin` commands against a serving rnx-server, the health probe, and TLS start-up errors.
#include "service_test_support.hpp"

#include "rnx/http/client.hpp"
#include "rnx/common/json.hpp"
#include "rnx/service/verdicts.hpp"

#include <doctest/doctest.h>

#include <sqlite3.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <thread>

using namespace rnx;
using rnx::test::command_result;
using rnx::test::run_json;

namespace {

command_result rnx_server(std::vector<std::string> args) {
  args.insert(args.begin(), RNX_SERVER_BIN);
  return test::run_command(args);
}

// The token that `admin token create` prints on stdout (its only line there).
std::string create_token(const std::string& db, const std::string& project, const std::string& scope,
                         const std::string& label) {
  auto made =
      rnx_server({"admin", "token", "create", "--project", project, "--scope", scope, "--label", label, "--db", db});
  REQUIRE_MESSAGE(made.exit_code == 0, made.err);
  REQUIRE(made.out.size() == 66);  // rnx_<12 hex>_<48 hex> and a newline
  return made.out.substr(0, 65);
}

http::response upload(const test::server_process& server, const std::string& token, const std::string& commit) {
  return http::request("POST", server.url("/api/v1/runs"),
                       {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}},
                       run_json({.branch = "feature", .pull_request = 7, .commit = commit}), std::chrono::seconds(20));
}

// The `admin token list` row of one public id ("" when there is none).
std::string list_row(const std::string& listing, const std::string& public_id) {
  auto at = listing.find(public_id);
  if (at == std::string::npos) return "";
  return listing.substr(at, listing.find('\n', at) - at);
}

}  // namespace

TEST_CASE("token revoke: the very next upload with a revoked token is 401, other tokens keep working") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  REQUIRE(rnx_server({"admin", "project", "create", "demo", "--db", db}).exit_code == 0);
  std::string ci = create_token(db, "demo", "upload", "ci");
  std::string other = create_token(db, "demo", "upload", "nightly");
  test::server_process server(db);

  auto before = upload(server, ci, "c1");
  REQUIRE_MESSAGE(before.status == 201, before.body);

  // The listing names the token by its public id and never shows a secret.
  auto listed = rnx_server({"admin", "token", "list", "--db", db});
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  const std::string ci_id = ci.substr(4, 12);
  CHECK(listed.out.rfind("ID", 0) == 0);
  CHECK(list_row(listed.out, ci_id).find("upload") != std::string::npos);
  CHECK(list_row(listed.out, ci_id).find("active") != std::string::npos);
  CHECK(listed.out.find(ci.substr(17)) == std::string::npos);
  CHECK(listed.out.find(other.substr(17)) == std::string::npos);

  // Revoked by id in another process while the server runs; nothing is restarted or reloaded.
  auto revoked = rnx_server({"admin", "token", "revoke", ci_id, "--db", db});
  REQUIRE_MESSAGE(revoked.exit_code == 0, revoked.err);
  CHECK(revoked.out.find("revoked token " + ci_id + " (project demo, label ci, upload scope)") != std::string::npos);

  auto after = upload(server, ci, "c2");
  CHECK(after.status == 401);
  CHECK(after.body.find("not valid (unknown, revoked or mistyped)") != std::string::npos);
  CHECK(upload(server, other, "c3").status == 201);

  auto relisted = rnx_server({"admin", "token", "list", "--project", "demo", "--db", db});
  CHECK(list_row(relisted.out, ci_id).find("revoked 20") != std::string::npos);
  CHECK(list_row(relisted.out, other.substr(4, 12)).find("active") != std::string::npos);

  // Revoking again, or an id that is not there, is a clear error and exit 2.
  auto again = rnx_server({"admin", "token", "revoke", ci_id, "--db", db});
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("token " + ci_id + " (project demo, label \"ci\") was revoked already at 20") !=
        std::string::npos);
  auto unknown = rnx_server({"admin", "token", "revoke", "0123456789ab", "--db", db});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("no token has the id 0123456789ab in " + db) != std::string::npos);
  auto malformed = rnx_server({"admin", "token", "revoke", "rnx_zz", "--db", db});
  CHECK(malformed.exit_code == 2);
  CHECK(malformed.err.find("\"rnx_zz\" does not name a token: give its id as `rnx-server admin token list` shows it") !=
        std::string::npos);
}

TEST_CASE("token rotate: a new secret for the same label and scope; the old one ends now or after the grace") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  REQUIRE(rnx_server({"admin", "project", "create", "demo", "--db", db}).exit_code == 0);
  std::string ci = create_token(db, "demo", "upload", "ci");
  std::string maintainers = create_token(db, "demo", "accept", "maintainers");
  test::server_process server(db);

  // Rotated with a grace period: both work until it ends, and the listing says when.
  auto graceful = rnx_server({"admin", "token", "rotate", ci.substr(4, 12), "--grace", "3600", "--db", db});
  REQUIRE_MESSAGE(graceful.exit_code == 0, graceful.err);
  REQUIRE(graceful.out.size() == 66);
  std::string ci2 = graceful.out.substr(0, 65);
  CHECK(graceful.err.find("the old one stops working at 20") != std::string::npos);
  CHECK(upload(server, ci, "g1").status == 201);
  CHECK(upload(server, ci2, "g2").status == 201);
  auto listed = rnx_server({"admin", "token", "list", "--db", db});
  CHECK(list_row(listed.out, ci.substr(4, 12)).find("expires 20") != std::string::npos);
  CHECK(list_row(listed.out, ci2.substr(4, 12)).find("upload") != std::string::npos);
  CHECK(list_row(listed.out, ci2.substr(4, 12)).find(" ci ") != std::string::npos);
  auto twice = rnx_server({"admin", "token", "rotate", ci.substr(4, 12), "--db", db});
  CHECK(twice.exit_code == 2);
  CHECK(twice.err.find("was rotated already") != std::string::npos);

  // Rotated without grace (given as the whole token): the old one is 401 on the next request.
  auto now = rnx_server({"admin", "token", "rotate", maintainers, "--db", db});
  REQUIRE_MESSAGE(now.exit_code == 0, now.err);
  std::string maintainers2 = now.out.substr(0, 65);
  CHECK(now.err.find("the old one is revoked now") != std::string::npos);
  CHECK(now.err.find(maintainers.substr(17)) == std::string::npos);
  auto accept = [&](const std::string& token) {
    return http::request("POST", server.url("/api/v1/baselines"),
                         {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}},
                         R"({"run_id": "1", "accepted_by": "alice", "reason": "rotation test"})",
                         std::chrono::seconds(20));
  };
  CHECK(accept(maintainers).status == 401);
  auto accepted = accept(maintainers2);
  CHECK_MESSAGE(accepted.status == 201, accepted.body);  // the replacement keeps the accept scope

  // Revoking ends a grace period at once.
  REQUIRE(rnx_server({"admin", "token", "revoke", ci, "--db", db}).exit_code == 0);
  CHECK(upload(server, ci, "g3").status == 401);
  CHECK(upload(server, ci2, "g4").status == 201);
}

TEST_CASE("token create --scope baseline: the push job's token; the listing and the server know the scope") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  REQUIRE(rnx_server({"admin", "project", "create", "demo", "--db", db}).exit_code == 0);
  std::string ci = create_token(db, "demo", "upload", "ci");
  std::string main_ci = create_token(db, "demo", "baseline", "ci-main");
  auto listed = rnx_server({"admin", "token", "list", "--db", db});
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.err);
  CHECK(list_row(listed.out, main_ci.substr(4, 12)).find("baseline") != std::string::npos);
  auto legacy = rnx_server({"admin", "token", "create", "--project", "demo", "--scope", "legacy", "--db", db});
  CHECK(legacy.exit_code == 2);  // not a scope one can create
  test::server_process server(db);
  auto push = [&](const std::string& token, const std::string& commit) {
    return http::request("POST", server.url("/api/v1/runs"),
                         {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + token}},
                         run_json({.branch = "main", .commit = commit}), std::chrono::seconds(20));
  };
  auto refused = push(ci, "m1");
  CHECK(refused.status == 403);
  CHECK(refused.body.find("--scope baseline") != std::string::npos);
  CHECK(push(main_ci, "m2").status == 201);
}

TEST_CASE("token rotate: a legacy token needs a scope for its replacement") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string legacy = test::make_token(db, "demo", "admin");
  {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw, "UPDATE tokens SET scope = 'legacy'", nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  auto refused = rnx_server({"admin", "token", "rotate", legacy.substr(4, 12), "--db", db});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("has no scope (it was made before scopes existed); give the replacement one with --scope "
                         "upload|baseline|accept|admin") != std::string::npos);
  auto rotated = rnx_server({"admin", "token", "rotate", legacy.substr(4, 12), "--scope", "upload", "--db", db});
  REQUIRE_MESSAGE(rotated.exit_code == 0, rotated.err);
  store::database d(db);
  CHECK_FALSE(d.authenticate(legacy).has_value());
  auto who = d.authenticate(rotated.out.substr(0, 65));
  REQUIRE(who.has_value());
  CHECK(who->scope == store::token_scope::upload);
}

TEST_CASE("admin backup: a consistent copy while the server takes uploads; the restored copy serves the runs") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  std::vector<std::string> before_backup;
  {
    test::server_process server(db);
    for (int i = 0; i < 5; ++i) {
      auto r = upload(server, token, "before" + std::to_string(i));
      REQUIRE(r.status == 201);
      before_backup.push_back(std::string(json::parse(r.body, "upload").at("id").as_string()));
    }
    // Uploads keep arriving while the backup runs.
    std::atomic<bool> stop{false};
    std::mutex mutex;
    std::condition_variable stored;  // told after each upload the server took, and when the writer gives up
    int during = 0;
    bool writer_done = false;
    std::thread writer([&] {
      for (int i = 0; !stop && i < 200; ++i) {
        if (upload(server, token, "during" + std::to_string(i)).status != 201) continue;
        std::lock_guard lock(mutex);
        ++during;
        stored.notify_all();
      }
      std::lock_guard lock(mutex);
      writer_done = true;
      stored.notify_all();
    });
    {
      // The backup starts once three uploads are in (the bound only keeps a broken server from hanging the test).
      std::unique_lock lock(mutex);
      stored.wait_for(lock, std::chrono::seconds(30), [&] { return during >= 3 || writer_done; });
    }
    auto backup = rnx_server({"admin", "backup", dir.file("backup.sqlite"), "--db", db});
    stop = true;
    writer.join();
    REQUIRE_MESSAGE(backup.exit_code == 0, backup.err);
    CHECK(backup.out.find("backed up " + db + " to " + dir.file("backup.sqlite")) != std::string::npos);
    CHECK(backup.out.find("schema version " + std::to_string(store::current_schema_version)) != std::string::npos);
    CHECK(during >= 3);
  }
  // As private as the database, one self-contained file: no WAL beside it, no temp file left behind.
  CHECK(std::filesystem::status(dir.file("backup.sqlite")).permissions() == std::filesystem::status(db).permissions());
  CHECK_FALSE(std::filesystem::exists(dir.file("backup.sqlite-wal")));
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
  }

  // Restore: the backup file becomes a server's database; every run acknowledged before the backup is there.
  std::filesystem::copy_file(dir.file("backup.sqlite"), dir.file("restored.sqlite"));
  {
    store::database restored(dir.file("restored.sqlite"));
    CHECK(restored.integrity_check() == "ok");
    CHECK(restored.count_runs() >= 5);
  }
  test::server_process server(dir.file("restored.sqlite"));
  for (const auto& id : before_backup) {
    auto r = http::request("GET", server.url("/api/v1/runs/" + id), {{"Authorization", "Bearer " + token}}, {},
                           std::chrono::seconds(20));
    CHECK_MESSAGE(r.status == 200, r.body);
    CHECK(r.body.find("\"commit\":\"before") != std::string::npos);
  }
  // And it takes new uploads with the same token.
  CHECK(upload(server, token, "after-restore").status == 201);
}

TEST_CASE("admin backup: refuses what would lose data or create a database by mistake") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  test::make_token(db, "demo", "upload");

  auto missing = rnx_server({"admin", "backup", dir.file("b.sqlite"), "--db", dir.file("typo.sqlite")});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir.file("typo.sqlite") + ": no database file here") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("typo.sqlite")));

  auto folder = rnx_server({"admin", "backup", dir.path().string(), "--db", db});
  CHECK(folder.exit_code == 2);
  CHECK(folder.err.find("must be a file name") != std::string::npos);

  auto no_folder = rnx_server({"admin", "backup", dir.file("nope/b.sqlite"), "--db", db});
  CHECK(no_folder.exit_code == 2);
  CHECK(no_folder.err.find("the backup's folder does not exist") != std::string::npos);

  REQUIRE(rnx_server({"admin", "backup", dir.file("b.sqlite"), "--db", db}).exit_code == 0);
  auto exists = rnx_server({"admin", "backup", dir.file("b.sqlite"), "--db", db});
  CHECK(exists.exit_code == 2);
  CHECK(exists.err.find("b.sqlite exists; choose a new name or pass --overwrite") != std::string::npos);
  CHECK(rnx_server({"admin", "backup", dir.file("b.sqlite"), "--overwrite", "--db", db}).exit_code == 0);

  auto itself = rnx_server({"admin", "backup", db, "--overwrite", "--db", db});
  CHECK(itself.exit_code == 2);
  CHECK(itself.err.find("is the database itself") != std::string::npos);

  {
    std::ofstream text(dir.file("notes.txt"));
    text << "not a database, but long enough to have a first page header: " << std::string(200, 'x') << "\n";
  }
  auto not_sqlite = rnx_server({"admin", "backup", dir.file("c.sqlite"), "--db", dir.file("notes.txt")});
  CHECK(not_sqlite.exit_code == 2);
  CHECK(not_sqlite.err.find(dir.file("notes.txt") + " is not an SQLite database") != std::string::npos);

  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(dir.file("other.sqlite").c_str(), &raw) == SQLITE_OK);
  REQUIRE(sqlite3_exec(raw, "CREATE TABLE t (x)", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
  auto foreign = rnx_server({"admin", "backup", dir.file("c.sqlite"), "--db", dir.file("other.sqlite")});
  CHECK(foreign.exit_code == 2);
  CHECK(foreign.err.find("is not an rnx database") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir.file("c.sqlite")));
}

TEST_CASE("schema 3 -> 4: tokens made before revocation existed keep working and can be revoked") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string token = test::make_token(db, "demo", "upload");
  {
    // Back to the version 3 layout: no revoked_at / expires_at (nor what versions 5, 6 and 8 added), versions 4
    // to 8 not recorded.
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw,
                         (std::string(test::undo_schema_8) +
                          "ALTER TABLE tokens DROP COLUMN revoked_at; ALTER TABLE tokens DROP COLUMN expires_at; "
                          "DROP TABLE shard_uploads; DROP TABLE run_groups; "
                          "DROP TABLE change_points; ALTER TABLE results DROP COLUMN stat_ms; "
                          "ALTER TABLE results DROP COLUMN stat_log_se; DELETE FROM schema_version WHERE version >= 4")
                             .c_str(),
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  store::database d(db);
  CHECK(d.schema_version() == store::current_schema_version);
  REQUIRE(d.authenticate(token).has_value());
  auto listed = d.list_tokens();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].revoked_at.empty());
  CHECK(listed[0].expires_at.empty());
  d.revoke_token(token);
  CHECK_FALSE(d.authenticate(token).has_value());
}

TEST_CASE("schema 6 -> 7: the verdicts stored before are kept and paired verdicts can be stored") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::int64_t run_id = 0;
  {
    store::database d(db);
    auto project = d.ensure_project("demo");
    run_id = store::upload_run(d, project.id, test::make_run({.branch = "feature", .pull_request = 2})).run.id;
    store::judge_stored_run(d, run_id, gate_policy{});
  }
  {
    // Back to the version 6 layout: the verdicts table whose CHECK knows request and regression only (nor what
    // version 8 added).
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(db.c_str(), &raw) == SQLITE_OK);
    REQUIRE(sqlite3_exec(raw,
                         (std::string(test::undo_schema_8) +
                          "CREATE TABLE v6 (id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), "
                          "baseline_run_id INTEGER REFERENCES runs(id), kind TEXT NOT NULL CHECK (kind IN ('request', "
                          "'regression')), verdict TEXT NOT NULL, document TEXT NOT NULL, created_at TEXT NOT NULL); "
                          "INSERT INTO v6 SELECT * FROM verdicts; DROP TABLE verdicts; "
                          "ALTER TABLE v6 RENAME TO verdicts; CREATE INDEX verdicts_by_run ON verdicts (run_id); "
                          "DELETE FROM schema_version WHERE version >= 7")
                             .c_str(),
                         nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(raw);
  }
  store::database d(db);
  CHECK(d.schema_version() == store::current_schema_version);
  auto kept = d.verdict_of_run(run_id);
  REQUIRE(kept);
  CHECK(kept->kind == store::verdict_kind::request);
  verdict_document v;
  v.verdict = overall::warn;
  CHECK(d.store_verdict(run_id, std::nullopt, store::verdict_kind::paired, v) > kept->id);
  CHECK(d.verdict_of_run(run_id)->kind == store::verdict_kind::paired);
}

TEST_CASE("health: exit 0 when the server answers ok (plain and TLS), 1 when it does not") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  {
    test::server_process server(db);
    auto ok = rnx_server({"health", "--url", server.url("/healthz")});
    CHECK_MESSAGE(ok.exit_code == 0, ok.err);
    CHECK(ok.out.find("rnx-server health: ok (" + server.url("/healthz") + ", schema version") != std::string::npos);
    auto wrong_path = rnx_server({"health", "--url", server.url("/nothing")});
    CHECK(wrong_path.exit_code == 1);
    CHECK(wrong_path.err.find("answered HTTP 404") != std::string::npos);
  }
  // Nobody listens on the port any more.
  test::temp_dir other;
  std::string cert = other.file("cert.pem");
  std::string key = other.file("key.pem");
  REQUIRE_MESSAGE(test::make_test_certificate(cert, key, true),
                  "the openssl command is needed to make a test certificate");
  test::server_process tls(db, {"--tls-cert", cert, "--tls-key", key});
  auto trusted = rnx_server({"health", "--url", tls.url("/healthz"), "--ca-file", cert});
  CHECK_MESSAGE(trusted.exit_code == 0, trusted.err);
  auto untrusted = rnx_server({"health", "--url", tls.url("/healthz")});
  CHECK(untrusted.exit_code == 1);
  // OpenSSL's SSL_CERT_FILE replaces the system store for every rnx client (docs/service.md: a private CA).
  setenv("SSL_CERT_FILE", cert.c_str(), 1);
  auto by_env = rnx_server({"health", "--url", tls.url("/healthz")});
  unsetenv("SSL_CERT_FILE");
  CHECK_MESSAGE(by_env.exit_code == 0, by_env.err);
  tls.stop();
  auto down =
      rnx_server({"health", "--url", "http://127.0.0.1:" + std::to_string(tls.port()) + "/healthz", "--timeout", "2"});
  CHECK(down.exit_code == 1);
  CHECK(down.err.find("rnx-server health: http://127.0.0.1:" + std::to_string(tls.port())) != std::string::npos);
}

TEST_CASE("TLS: a half-given or unreadable certificate is a one-line start-up error, exit 2") {
  test::temp_dir dir;
  std::string db = dir.file("rnx.sqlite");
  std::string cert = dir.file("cert.pem");
  std::string key = dir.file("key.pem");
  REQUIRE(test::make_test_certificate(cert, key, false));
  auto half = rnx_server({"serve", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", cert});
  CHECK(half.exit_code == 2);
  CHECK(half.err == "rnx-server: error: TLS needs both --tls-cert and --tls-key\n");
  auto missing = rnx_server(
      {"serve", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", dir.file("none.pem"), "--tls-key", key});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find(dir.file("none.pem") + ": cannot load the TLS certificate chain (PEM)") != std::string::npos);
  auto swapped = rnx_server({"serve", "--db", db, "--listen", "127.0.0.1:0", "--tls-cert", key, "--tls-key", cert});
  CHECK(swapped.exit_code == 2);
  CHECK(swapped.err.find(key + ": cannot load the TLS certificate chain (PEM)") != std::string::npos);
}
