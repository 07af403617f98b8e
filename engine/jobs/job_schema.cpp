#include "engine/jobs/job_schema.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/jobs/row_codec.h"
#include "engine/jobs/sqlite_db.h"

namespace sluice {
namespace {

constexpr const char* kCreateTables = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE rows (
  row_index INTEGER PRIMARY KEY NOT NULL,
  line INTEGER NOT NULL,
  status TEXT NOT NULL,
  error TEXT NOT NULL,
  input TEXT NOT NULL,
  messages TEXT NOT NULL,
  prompt TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  samples TEXT NOT NULL,
  seed INTEGER NOT NULL,
  queue_ms REAL,
  ttft_ms REAL,
  total_ms REAL
);
)sql";

// Added in schema version 2. A pick names two different samples of its row (chosen and rejected,
// or the two of a tie), or marks the row unusable (then the sample columns mean nothing);
// is_unusable holds which (0 a pair, 1 unusable, 2 a tie: job_schema.h).
constexpr const char* kCreatePairPicksTable = R"sql(
CREATE TABLE pair_picks (
  row_index INTEGER PRIMARY KEY NOT NULL,
  chosen_sample INTEGER NOT NULL,
  rejected_sample INTEGER NOT NULL,
  is_unusable INTEGER NOT NULL
);
)sql";

void put_meta(SqliteDb& db, const char* key, const std::string& value) {
  SqliteStatement statement(db, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)");
  statement.bind_text(1, key);
  statement.bind_text(2, value);
  statement.step();
}

// Returns the meta value for key, or fails naming the file.
std::string get_meta(SqliteDb& db, const char* key) {
  SqliteStatement statement(db, "SELECT value FROM meta WHERE key = ?");
  statement.bind_text(1, key);
  if (!statement.step() || statement.column_is_null(0))
    fail(db.path(), ": not a Sluice job file (its meta table has no '", key, "')");
  return statement.column_text(0);
}

int64_t parse_schema_version(const std::string& text, const std::string& path) {
  size_t parsed = 0;
  int64_t version = 0;
  try {
    version = std::stoll(text, &parsed);
  } catch (const std::exception&) {
    parsed = 0;
  }
  if (parsed == 0 || parsed != text.size() || version < 1)
    fail(path, ": not a Sluice job file (schema_version '", text, "' is not a positive integer)");
  return version;
}

// What a job file that never got its first commit holds: nothing a run could resume from.
[[noreturn]] void fail_uninitialised(const std::string& path, const char* what) {
  fail(path, ": ", what,
       ": the run that created this job file stopped before its first commit, so it holds no "
       "rows and no parameters; start the job again (a new job may replace this file)");
}

// True when db, whose header carries application_id, was meant to become a job but never got a
// table: a create killed before its first commit (older builds created the file in place).
bool is_tableless_job(SqliteDb& db, int64_t application_id) {
  const bool may_be_a_job = application_id == kJobApplicationId || application_id == 0;
  return may_be_a_job && db.query_int("SELECT COUNT(*) FROM sqlite_schema") == 0;
}

}  // namespace

void configure_job_connection(SqliteDb& db) {
  SqliteStatement journal(db, "PRAGMA journal_mode = WAL");
  const std::string mode = journal.step() ? journal.column_text(0) : std::string();
  if (mode != "wal") fail(db.path(), ": cannot switch the job file to WAL mode (got '", mode, "')");
  // In WAL mode, synchronous=NORMAL syncs the log only at checkpoints. A committed transaction is
  // in the OS's page cache once COMMIT returns, so a crash of this process (even kill -9) loses
  // nothing committed and never corrupts the file; only an OS crash or power cut can lose the
  // last commits. That is the trade the brief asks for: a row at most a second or so at risk,
  // without an fsync per commit.
  db.exec("PRAGMA synchronous = NORMAL");
}

void create_job_schema(SqliteDb& db, const JobInfo& info) {
  db.exec("BEGIN IMMEDIATE");
  try {
    // Inside the transaction: the file is marked as a job in the same commit that makes it one.
    db.exec(str_cat("PRAGMA application_id = ", kJobApplicationId).c_str());
    db.exec(kCreateTables);
    db.exec(kCreatePairPicksTable);
    put_meta(db, "schema_version", std::to_string(kJobSchemaVersion));
    put_meta(db, "info", to_json_text(job_info_to_json(info)));
    db.exec("COMMIT");
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
}

std::unique_ptr<SqliteDb> open_existing_job_db(const std::string& path) {
  std::error_code error;
  const auto status = std::filesystem::status(path, error);
  if (!std::filesystem::exists(status)) fail(path, ": no such job file");
  if (!std::filesystem::is_regular_file(status))
    fail(path, ": not a job file (not a regular file)");
  // SQLite would take an empty file for an empty database; it is a job whose creation stopped.
  if (std::filesystem::file_size(path, error) == 0 && !error)
    fail_uninitialised(path, "an empty file");
  return std::make_unique<SqliteDb>(path, SqliteDb::Mode::OpenExisting);
}

JobInfo read_job_meta(SqliteDb& db) {
  int64_t application_id = 0;
  try {
    // The first read of the file: garbage fails here with "file is not a database".
    application_id = db.query_int("PRAGMA application_id");
  } catch (const Error& e) {
    fail("not a Sluice job file: ", e.what());
  }
  if (is_tableless_job(db, application_id))
    fail_uninitialised(db.path(), "an uninitialised job file (no tables)");
  if (application_id != kJobApplicationId) {
    fail(db.path(), ": not a Sluice job file (an SQLite database with application_id ",
         application_id, ", a job has ", kJobApplicationId, ")");
  }
  const int64_t version = read_job_schema_version(db);
  if (version > kJobSchemaVersion) {
    fail(db.path(), ": the job file has schema version ", version, ", newer than the ",
         kJobSchemaVersion, " this build of Sluice reads; open it with a newer Sluice");
  }
  const std::string info_text = get_meta(db, "info");
  const auto info_json =
      parse_json_text<nlohmann::ordered_json>(info_text, str_cat(db.path(), ": the job info"));
  return job_info_from_json(info_json, db.path());
}

bool is_uninitialised_job_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) return false;
  const auto num_bytes = std::filesystem::file_size(path, error);
  if (error) return false;
  if (num_bytes == 0) return true;
  try {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    return is_tableless_job(db, db.query_int("PRAGMA application_id"));
  } catch (const Error&) {
    return false;  // not SQLite, or unreadable: not something to replace
  }
}

int64_t read_job_schema_version(SqliteDb& db) {
  return parse_schema_version(get_meta(db, "schema_version"), db.path());
}

void upgrade_job_schema(SqliteDb& db) {
  db.exec("BEGIN IMMEDIATE");
  try {
    // Read inside the write transaction: another connection may have upgraded the file first.
    const int64_t version = read_job_schema_version(db);
    if (version < 2) db.exec(kCreatePairPicksTable);
    if (version < kJobSchemaVersion)
      put_meta(db, "schema_version", std::to_string(kJobSchemaVersion));
    db.exec("COMMIT");
  } catch (...) {
    db.rollback_quietly();
    throw;
  }
}

void write_job_info(SqliteDb& db, const JobInfo& info) {
  put_meta(db, "info", to_json_text(job_info_to_json(info)));
}

}  // namespace sluice
