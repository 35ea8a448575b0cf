// Online backups of a store file: SQLite's backup API into a temp file, checked, fsynced, renamed into place.
#include "rnx/service/store.hpp"

#include "store_statement.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <system_error>
#include <thread>

namespace rnx::store {

namespace {

namespace fs = std::filesystem;

// An open sqlite3 handle that closes itself.
class connection {
 public:
  connection(const fs::path& path, int flags, std::string_view role) {
    int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
      std::string message = db_ ? sqlite3_errmsg(db_) : "out of memory";
      throw error(errc::not_found, path.string() + ": cannot open the " + std::string(role) + " (" + message + ")");
    }
    sqlite3_busy_timeout(db_, 10000);
  }
  ~connection() { sqlite3_close(db_); }
  connection(const connection&) = delete;
  connection& operator=(const connection&) = delete;
  sqlite3* get() const { return db_; }

  // The first column of the first row of `sql` as text ("" when there is no row); throws with `what` on failure.
  std::string scalar(const char* sql, std::string_view what) const {
    sqlite3_stmt* st = nullptr;
    std::string out;
    int rc = sqlite3_prepare_v2(db_, sql, -1, &st, nullptr);
    if (rc == SQLITE_OK) {
      rc = sqlite3_step(st);
      if (rc == SQLITE_ROW) {
        auto text = sqlite3_column_text(st, 0);
        if (text) out = reinterpret_cast<const char*>(text);
        rc = SQLITE_OK;
      } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
      }
    }
    std::string message = sqlite3_errmsg(db_);
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) throw error(errc::invalid, std::string(what) + ": " + message);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

// Removes the temp file unless the backup was renamed into place.
class temp_file {
 public:
  explicit temp_file(fs::path path) : path_(std::move(path)) {}
  ~temp_file() {
    if (!kept_) {
      std::error_code ec;
      for (const char* suffix : {"", "-journal", "-wal", "-shm"}) fs::remove(fs::path(path_.string() + suffix), ec);
    }
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  const fs::path& path() const { return path_; }
  void keep() { kept_ = true; }

 private:
  fs::path path_;
  bool kept_ = false;
};

void fsync_path(const fs::path& path, bool directory) {
  int fd = ::open(path.c_str(), directory ? O_RDONLY | O_DIRECTORY : O_RDONLY);
  if (fd < 0) throw error(errc::internal, path.string() + ": cannot open to flush it: " + std::strerror(errno));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  if (rc != 0) throw error(errc::internal, path.string() + ": fsync failed: " + std::strerror(saved));
}

}  // namespace

backup_result backup_database(const fs::path& source, const fs::path& dest, backup_options options) {
  std::error_code ec;
  if (!fs::is_regular_file(source, ec)) {
    throw error(errc::not_found, source.string() + ": no database file here; give the --db that rnx-server serve uses");
  }
  if (dest.empty() || dest.filename().empty() || fs::is_directory(dest, ec)) {
    throw error(errc::usage, "backup destination \"" + dest.string() +
                                 "\" must be a file name, e.g. /var/backups/rnx/rnx-$(date +%F).sqlite");
  }
  fs::path folder = dest.has_parent_path() ? dest.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec)) {
    throw error(errc::not_found, folder.string() + ": the backup's folder does not exist; create it first");
  }
  if (fs::exists(dest, ec)) {
    if (fs::equivalent(source, dest, ec)) {
      throw error(errc::usage, dest.string() + " is the database itself; back up to another file");
    }
    if (!options.overwrite) {
      throw error(errc::conflict, dest.string() + " exists; choose a new name or pass --overwrite to replace it");
    }
  }

  // A reader only: the server keeps writing while the copy is made (WAL), and a mistyped --db is not created.
  connection from(source, SQLITE_OPEN_READONLY, "database");
  temp_file temp(folder / ("." + dest.filename().string() + ".tmp-" + detail::random_hex(4)));
  backup_result result;
  {
    connection to(temp.path(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "backup file");
    sqlite3_backup* backup = sqlite3_backup_init(to.get(), "main", from.get(), "main");
    if (!backup)
      throw error(errc::internal, "SQLite cannot start the backup: " + std::string(sqlite3_errmsg(to.get())));
    // All pages in one step: one read transaction, hence one consistent snapshot while writers go on (WAL).
    // Busy or locked only while another connection holds an exclusive lock; wait that out, bounded.
    int rc = SQLITE_OK;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    do {
      rc = sqlite3_backup_step(backup, -1);
      if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    } while ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_OK) &&
             std::chrono::steady_clock::now() < deadline);
    sqlite3_backup_finish(backup);
    if ((rc & 0xff) == SQLITE_NOTADB) {
      throw error(errc::invalid,
                  source.string() + " is not an SQLite database; give the --db that rnx-server serve uses");
    }
    if (rc != SQLITE_DONE) {
      throw error(rc == SQLITE_BUSY || rc == SQLITE_LOCKED ? errc::unavailable : errc::internal,
                  source.string() + ": the backup did not complete: " + sqlite3_errstr(rc));
    }
    // The copy carries the source's WAL flag; a backup is one self-contained file.
    to.scalar("PRAGMA journal_mode=DELETE", "backup file");
    std::string integrity = to.scalar("PRAGMA integrity_check", "backup file");
    if (integrity != "ok") throw error(errc::internal, "the backup copy fails its integrity check: " + integrity);
    std::string version = to.scalar("SELECT max(version) FROM schema_version",
                                    source.string() + " is not an rnx database (it has no schema_version table)");
    result.schema_version = version.empty() ? 0 : std::stoi(version);
    result.projects = std::stoll(to.scalar("SELECT count(*) FROM projects", "backup file"));
    result.runs = std::stoll(to.scalar("SELECT count(*) FROM runs", "backup file"));
  }
  // The copy is as private as the database it copies (tokens' digests, every run).
  fs::permissions(temp.path(), fs::status(source).permissions() & fs::perms::all, ec);
  fsync_path(temp.path(), false);
  fs::rename(temp.path(), dest, ec);
  if (ec) throw error(errc::internal, dest.string() + ": cannot move the backup into place: " + ec.message());
  temp.keep();
  fsync_path(folder, true);
  result.path = dest;
  result.bytes = fs::file_size(dest, ec);
  return result;
}

}  // namespace rnx::store
