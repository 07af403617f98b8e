// A thin RAII layer over the SQLite C API for the job store: one connection, prepared
// statements, and every SQLite error turned into sluice::Error carrying sqlite3_errmsg and the
// database's file name. Nothing outside engine/jobs sees SQLite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct sqlite3;
struct sqlite3_stmt;

namespace sluice {

class SqliteDb {
 public:
  enum class Mode : uint8_t { OpenExisting, CreateNew };

  // Opens (or, for CreateNew, creates) the database file read-write. Throws Error naming path.
  SqliteDb(std::string path, Mode mode);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements that return no rows we need. Throws Error naming the file.
  void exec(const char* sql);
  // Runs a statement that returns one integer (a PRAGMA read); throws Error when it returns none.
  int64_t query_int(const char* sql);
  // Rolls back the open transaction, if any, ignoring errors: used on the way out of a failure
  // whose own error is the one worth reporting.
  void rollback_quietly() noexcept;

  // Throws Error "<path>: <what>: <sqlite3_errmsg>" when code is not SQLITE_OK/ROW/DONE.
  void check(int code, std::string_view what) const;
  [[noreturn]] void fail_with_message(std::string_view what) const;

  sqlite3* handle() const { return db_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

// A prepared statement; reset() makes it reusable, so the store keeps one per query.
class SqliteStatement {
 public:
  // Prepares sql on db. Throws Error naming the file.
  SqliteStatement(const SqliteDb& db, const char* sql);
  ~SqliteStatement();
  SqliteStatement(const SqliteStatement&) = delete;
  SqliteStatement& operator=(const SqliteStatement&) = delete;

  // Binders take 1-based parameter indices, as SQLite does. Text is copied by SQLite.
  void bind_int(int index, int64_t value);
  void bind_double(int index, double value);
  void bind_text(int index, std::string_view value);

  // Steps once: true when a row is available, false when done. Throws Error on failure.
  bool step();
  // Resets the statement and clears its bindings for the next use.
  void reset();

  // Column readers take 0-based column indices. column_is_null is true for SQL NULL.
  bool column_is_null(int column) const;
  bool column_is_integer(int column) const;
  bool column_is_real(int column) const;
  int64_t column_int(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;

 private:
  const SqliteDb& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace sluice
