// The job file's layout. A job file is an SQLite database marked with Sluice's application_id
// (so `file` and Sluice itself can tell it from any other SQLite file) holding two tables:
//
//   meta(key TEXT PRIMARY KEY, value TEXT)   -- "schema_version": "1", "info": JobInfo as JSON
//   rows(row_index INTEGER PRIMARY KEY, line, status, error, input, messages, prompt,
//        prompt_tokens, samples, seed, queue_ms, ttft_ms, total_ms)   -- one RowResult each
//
// A file written by a newer Sluice (a higher schema_version) is refused rather than misread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/jobs/job_info.h"

namespace sluice {

class SqliteDb;

inline constexpr int64_t kJobSchemaVersion = 1;
// "SlJb" as a big-endian 32-bit integer, stored in the SQLite header's application_id field.
inline constexpr int64_t kJobApplicationId = 0x536c4a62;

// Creates the tables in an empty database and stores info. Throws Error naming the file.
void create_job_schema(SqliteDb& db, const JobInfo& info);

// Opens an existing job file for SqliteDb use, after checking that the path is a regular,
// non-empty file; throws Error naming the path otherwise (schema checks are read_job_meta's).
std::unique_ptr<SqliteDb> open_existing_job_db(const std::string& path);

// Checks that db is a Sluice job of a schema this build reads and returns its info. Throws Error
// naming the file when it is not SQLite, not a Sluice job, an uninitialised job (no tables yet),
// or of a newer schema version.
JobInfo read_job_meta(SqliteDb& db);

// Returns true when path is a job file that never got its first commit: an empty file, or an
// SQLite database without a single table whose application_id is Sluice's or unset (a run killed
// while an older Sluice created the file in place). Such a file holds no rows and no parameters.
// Opening it lets SQLite roll back a leftover journal. Returns false for anything else, including
// a missing or unreadable path.
bool is_uninitialised_job_file(const std::string& path);

// Rewrites the stored info (total_rows changes once the source has been counted).
void write_job_info(SqliteDb& db, const JobInfo& info);

// Sets the per-connection pragmas every job connection uses (WAL, synchronous=NORMAL).
void configure_job_connection(SqliteDb& db);

}  // namespace sluice
