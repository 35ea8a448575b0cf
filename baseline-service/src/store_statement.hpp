// Inside rnx::store: the cached prepared statement of database, transactions, and the hashing helpers tokens and
// digests share.
#pragma once

#include "rnx/common/error.hpp"
#include "rnx/service/store.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sqlite3.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace rnx::store {

namespace detail {

// A time as the store keeps it: RFC 3339 in UTC to the second (as utc_now_rfc3339 writes it), so stored times
// compare as text.
std::string stored_time(std::chrono::system_clock::time_point when);

// The baselines table's source column (CHECK: 'push' or 'accepted').
inline baseline_kind stored_baseline_kind(std::string_view text) {
  auto kind = baseline_kind_from_string(text);
  if (!kind) {
    throw error(errc::internal, "the baselines table holds source \"" + std::string(text) +
                                    "\"; the schema allows only \"push\" or \"accepted\"");
  }
  return *kind;
}

// The verdicts table's kind column (CHECK: 'request', 'regression' or 'paired').
inline verdict_kind stored_verdict_kind(std::string_view text) {
  auto kind = verdict_kind_from_string(text);
  if (!kind) {
    throw error(errc::internal, "the verdicts table holds kind \"" + std::string(text) +
                                    "\"; the schema allows only \"request\", \"regression\" or \"paired\"");
  }
  return *kind;
}

inline std::array<unsigned char, 32> sha256_raw(std::string_view bytes) {
  std::array<unsigned char, 32> digest{};
  unsigned int length = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) != 1 || length != 32) {
    throw error(errc::internal, "SHA-256 failed in OpenSSL");
  }
  return digest;
}

inline std::string to_hex(const unsigned char* data, std::size_t size) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (std::size_t i = 0; i < size; ++i) {
    out += hex[data[i] >> 4];
    out += hex[data[i] & 15];
  }
  return out;
}

inline std::string random_hex(std::size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    throw error(errc::internal, "OpenSSL RAND_bytes failed; cannot create a token");
  }
  return to_hex(buffer.data(), buffer.size());
}

// Rolls back unless committed, so an exception half way leaves nothing half-written.
class transaction {
 public:
  explicit transaction(sqlite3* db) : db_(db) { run("BEGIN IMMEDIATE"); }
  ~transaction() {
    if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  void commit() {
    run("COMMIT");
    done_ = true;
  }

 private:
  void run(const char* sql) {
    char* message = nullptr;
    int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
    if (rc != SQLITE_OK) {
      std::string text = message ? message : "unknown error";
      sqlite3_free(message);
      if (rc == SQLITE_BUSY) throw error(errc::unavailable, "the database is busy; retry the request");
      throw error(errc::internal, std::string("SQLite ") + sql + " failed: " + text);
    }
  }
  sqlite3* db_;
  bool done_ = false;
};

}  // namespace detail

// One cached prepared statement; bind/step/column helpers that throw rnx::error on failure.
class database::statement {
 public:
  statement(sqlite3* db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr) != SQLITE_OK) {
      throw error(errc::internal, std::string("SQLite cannot prepare a statement: ") + sqlite3_errmsg(db));
    }
  }
  ~statement() { sqlite3_finalize(stmt_); }
  statement(const statement&) = delete;
  statement& operator=(const statement&) = delete;

  const char* sql() const { return sqlite3_sql(stmt_); }
  void restart() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  statement& bind(int index, std::int64_t v) {
    check(sqlite3_bind_int64(stmt_, index, v));
    return *this;
  }
  statement& bind(int index, double v) {
    check(sqlite3_bind_double(stmt_, index, v));
    return *this;
  }
  statement& bind(int index, std::string_view v) {
    check(sqlite3_bind_text(stmt_, index, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    return *this;
  }
  statement& bind_blob(int index, const void* data, std::size_t size) {
    check(sqlite3_bind_blob(stmt_, index, data, static_cast<int>(size), SQLITE_TRANSIENT));
    return *this;
  }
  statement& bind_null(int index) {
    check(sqlite3_bind_null(stmt_, index));
    return *this;
  }
  template <class T>
  statement& bind(int index, const std::optional<T>& v) {
    if (v) return bind(index, *v);
    return bind_null(index);
  }
  // True while a row is available.
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    int code = sqlite3_extended_errcode(db_);
    std::string message = sqlite3_errmsg(db_);
    sqlite3_reset(stmt_);
    if ((code & 0xff) == SQLITE_CONSTRAINT) throw error(errc::conflict, "the record already exists: " + message);
    if ((code & 0xff) == SQLITE_BUSY) {
      throw error(errc::unavailable, "the database is busy (another writer holds it); retry the request");
    }
    throw error(errc::internal, "SQLite failed: " + message);
  }
  void run() {
    while (step()) {
    }
  }
  std::int64_t integer(int col) { return sqlite3_column_int64(stmt_, col); }
  double real(int col) { return sqlite3_column_double(stmt_, col); }
  bool is_null(int col) { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  std::string text(int col) {
    auto p = sqlite3_column_text(stmt_, col);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
             : std::string();
  }
  std::string blob(int col) {
    auto p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col))) : std::string();
  }

 private:
  void check(int rc) {
    if (rc != SQLITE_OK) throw error(errc::internal, std::string("SQLite bind failed: ") + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// The columns of a result's run_number (x is the results table), read by number_from_row: the run statistic and
// its interval, or for a result stored before the statistic was kept, its pooled median and that interval.
#define RNX_NUMBER_COLUMNS                                                                             \
  "coalesce(x.stat_ms, x.median_ms), CASE WHEN x.stat_ms IS NULL THEN x.lo_ms ELSE x.stat_lo_ms END, " \
  "CASE WHEN x.stat_ms IS NULL THEN x.hi_ms ELSE x.stat_hi_ms END, x.unstable, x.unstable_reason"

}  // namespace rnx::store
