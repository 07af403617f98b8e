// The job file's layout. A job file is an SQLite database marked with Sluice's application_id
// (so `file` and Sluice itself can tell it from any other SQLite file) holding these tables:
//
//   meta(key TEXT PRIMARY KEY, value TEXT)   -- "schema_version": "2", "info": JobInfo as JSON
//   rows(row_index INTEGER PRIMARY KEY, line, status, error, input, messages, prompt,
//        prompt_tokens, samples, seed, queue_ms, ttft_ms, total_ms)   -- one RowResult each
//   pair_picks(row_index INTEGER PRIMARY KEY, chosen_sample, rejected_sample, is_unusable)
//        -- one PairPick each: a person's DPO choice for a row (schema version 2); is_unusable
//           holds the kind of decision: 0 a pair (chosen, rejected), 1 unusable, 2 a tie (the
//           two samples compared are equally good). Ties came later without a version change:
//           an older Sluice reads any non-zero value as unusable and leaves the row out of its
//           dpo export, as a tie is left out.
//
// Versions: 1 had meta and rows only; 2 added pair_picks. A version 1 file is read as it is (it
// has no picks) and upgraded in place by upgrade_job_schema, which the first pick's write calls,
// so merely opening or exporting an older job never changes it. A file written by a newer Sluice
// (a higher schema_version) is refused rather than misread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/jobs/job_info.h"

namespace sluice {

class SqliteDb;

inline constexpr int64_t kJobSchemaVersion = 2;
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

// Returns the schema version stored in db's meta table (db must have passed read_job_meta).
int64_t read_job_schema_version(SqliteDb& db);

// Brings db, a job of an older schema version, up to kJobSchemaVersion in one transaction
// (version 1 gains the empty pair_picks table); does nothing for a current one. Must not be
// called inside an open transaction. Throws Error naming the file.
void upgrade_job_schema(SqliteDb& db);

// Rewrites the stored info (total_rows changes once the source has been counted).
void write_job_info(SqliteDb& db, const JobInfo& info);

// Sets the per-connection pragmas every job connection uses (WAL, synchronous=NORMAL).
void configure_job_connection(SqliteDb& db);

}  // namespace sluice
