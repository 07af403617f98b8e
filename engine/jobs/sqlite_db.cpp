#include "engine/jobs/sqlite_db.h"

#include <sqlite3.h>

#include <utility>

#include "engine/core/error.h"

namespace sluice {
namespace {

// How long a connection waits for another connection's lock (a reader's checkpoint, a second
// process listing jobs) before SQLITE_BUSY becomes an error.
constexpr int kBusyTimeoutMs = 5000;

// A plain-words addition to SQLite's message for the errors a user can act on.
const char* explain_code(int code) {
  switch (code & 0xff) {
    case SQLITE_CORRUPT:
      return " - the job file is damaged";
    case SQLITE_NOTADB:
      return " - not an SQLite file";
    case SQLITE_FULL:
      return " - the disk is full";
    default:
      return "";
  }
}

}  // namespace

SqliteDb::SqliteDb(std::string path, Mode mode) : path_(std::move(path)) {
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (mode == Mode::CreateNew) flags |= SQLITE_OPEN_CREATE;
  const int code = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (code != SQLITE_OK) {
    // The handle exists even on failure (unless out of memory) and carries the message.
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(code);
    sqlite3_close(db_);
    db_ = nullptr;
    fail(path_, ": cannot open the job file: ", message);
  }
  sqlite3_extended_result_codes(db_, 1);
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
}

SqliteDb::~SqliteDb() {
  // Statements are owned by the store and destroyed before the connection, so close succeeds.
  sqlite3_close(db_);
}

void SqliteDb::exec(const char* sql) {
  char* message = nullptr;
  const int code = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (code != SQLITE_OK) {
    const std::string text = message != nullptr ? message : sqlite3_errstr(code);
    sqlite3_free(message);
    fail(path_, ": ", text, explain_code(code), " (while running: ", sql, ")");
  }
}

int64_t SqliteDb::query_int(const char* sql) {
  SqliteStatement statement(*this, sql);
  if (!statement.step()) fail(path_, ": no result from: ", sql);
  return statement.column_int(0);
}

void SqliteDb::rollback_quietly() noexcept {
  if (sqlite3_get_autocommit(db_) == 0) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void SqliteDb::check(int code, std::string_view what) const {
  if (code == SQLITE_OK || code == SQLITE_ROW || code == SQLITE_DONE) return;
  fail_with_message(what);
}

void SqliteDb::fail_with_message(std::string_view what) const {
  fail(path_, ": ", what, ": ", sqlite3_errmsg(db_), explain_code(sqlite3_extended_errcode(db_)));
}

SqliteStatement::SqliteStatement(const SqliteDb& db, const char* sql) : db_(db) {
  const int code = sqlite3_prepare_v3(db.handle(), sql, -1, 0, &stmt_, nullptr);
  db_.check(code, str_cat("cannot prepare '", sql, "'"));
}

SqliteStatement::~SqliteStatement() {
  sqlite3_finalize(stmt_);
}

void SqliteStatement::bind_int(int index, int64_t value) {
  db_.check(sqlite3_bind_int64(stmt_, index, value), "cannot bind an integer");
}

void SqliteStatement::bind_double(int index, double value) {
  db_.check(sqlite3_bind_double(stmt_, index, value), "cannot bind a number");
}

void SqliteStatement::bind_text(int index, std::string_view value) {
  db_.check(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      "cannot bind text");
}

bool SqliteStatement::step() {
  const int code = sqlite3_step(stmt_);
  if (code == SQLITE_ROW) return true;
  if (code == SQLITE_DONE) return false;
  // Take the message before the reset, which makes the statement usable again.
  const std::string message = sqlite3_errmsg(db_.handle());
  const char* sql = sqlite3_sql(stmt_);
  const std::string what =
      str_cat(message, explain_code(code), " (while running: ", sql != nullptr ? sql : "?", ")");
  sqlite3_reset(stmt_);
  fail(db_.path(), ": ", what);
}

void SqliteStatement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

bool SqliteStatement::column_is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

bool SqliteStatement::column_is_integer(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_INTEGER;
}

bool SqliteStatement::column_is_real(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_FLOAT;
}

int64_t SqliteStatement::column_int(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double SqliteStatement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string SqliteStatement::column_text(int column) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
  const int num_bytes = sqlite3_column_bytes(stmt_, column);
  if (text == nullptr) return {};
  return std::string(text, static_cast<size_t>(num_bytes));
}

}  // namespace sluice
