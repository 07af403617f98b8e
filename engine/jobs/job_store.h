// One job = one SQLite file (WAL mode) holding the job's info and every finished row's result,
// so a job survives a crash and resumes where it stopped. Finished rows are committed in small
// batches: add_result() queues a row and commits the queue when 64 rows wait or a second has
// passed since the last commit, so while rows keep finishing none stays only in memory for more
// than about a second. When rows stop finishing, the owner (the app's worker) calls flush() on an
// idle timer (e.g. every 500 ms) so the last few rows reach the file too.
//
// Not thread-safe: one thread owns a JobStore. Other connections (another JobStore on the same
// file, the sqlite3 shell, `sluice jobs list`) may read at the same time; WAL lets them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/jobs/job_info.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class SqliteDb;
class SqliteStatement;

class JobStore {
 public:
  // Commit the queue once this many finished rows wait in it.
  static constexpr size_t kCommitBatchRows = 64;
  // ... or once this long has passed since the last commit.
  static constexpr std::chrono::milliseconds kCommitInterval{1000};

  // Creates a new job file at path with info (created_at is set to now). Throws Error naming the
  // file if it already exists or cannot be written.
  static std::unique_ptr<JobStore> create(const std::string& path, const JobInfo& info);
  // Opens an existing job file. Throws Error naming the file if it is missing, not a Sluice job
  // (or not SQLite at all), or of a newer schema version.
  static std::unique_ptr<JobStore> open(const std::string& path);

  // Commits queued results. Errors are swallowed here (a destructor must not throw): call
  // flush() first where a failed write must be reported.
  ~JobStore();
  JobStore(const JobStore&) = delete;
  JobStore& operator=(const JobStore&) = delete;

  const JobInfo& info() const { return info_; }
  const std::string& path() const;

  // Records the number of rows in the source once known; stored at once.
  void set_total_rows(int64_t total);

  // Rows that must not run again on resume: every stored result (done, failed, skipped), sorted.
  std::vector<int64_t> finished_row_indices() const;
  // Returns true when a result for row_index is stored or queued.
  bool has_result(int64_t row_index) const;

  // Queues a finished row (status Done, Failed or Skipped; Pending throws Error). A result for a
  // row_index already stored replaces it (a retried failed row). Commits the queue when
  // kCommitBatchRows rows wait or kCommitInterval has passed since the last commit.
  void add_result(const RowResult& result);
  // Commits every queued result in one transaction. Throws Error naming the file on failure
  // (the queue is kept, so a later flush can retry).
  void flush();

  // Returns the number of stored results by status, and the source's row count.
  JobCounts counts() const;
  // Returns the stored result for row_index, or nullopt.
  std::optional<RowResult> result(int64_t row_index) const;
  // Calls fn with every stored result in row_index order, reading them through an SQLite cursor
  // (one row in memory at a time). fn may read this store but must not add results.
  void for_each_result(const std::function<void(const RowResult&)>& fn) const;

  // Runs fn inside one read transaction, so every read it makes sees the same snapshot of the
  // job even while another connection keeps adding rows: an export's passes (columns first,
  // then rows) must agree. fn must not add results. Nested calls join the outer snapshot.
  void with_snapshot(const std::function<void()>& fn) const;

 private:
  JobStore(std::unique_ptr<SqliteDb> db, JobInfo info);

  // Reads see every added result: rather than merge the queue into each query, they commit it
  // first (at most kCommitBatchRows - 1 rows, under a second old). Hence mutable.
  void commit_queue() const;

  std::unique_ptr<SqliteDb> db_;
  std::unique_ptr<SqliteStatement> insert_statement_;  // declared after db_: finalized first
  JobInfo info_;
  mutable std::vector<RowResult> queue_;
  mutable std::chrono::steady_clock::time_point last_commit_time_;
  mutable bool is_in_snapshot_ = false;
};

}  // namespace sluice
