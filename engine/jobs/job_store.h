// One job = one SQLite file (WAL mode) holding the job's info and every finished row's result,
// so a job survives a crash and resumes where it stopped. A new job file is built beside its
// path and appears there complete, so a crash never leaves a job file without its info.
// Finished rows are committed in small batches: add_result() queues a row and commits the queue
// when 64 rows wait or a second has passed since the last commit, so while rows keep finishing
// none stays only in memory for more than about a second. When rows stop finishing, the owner
// (the app's worker) calls flush() on an idle timer (e.g. every 500 ms) so the last few rows
// reach the file too. A row is only safe once committed: whoever shows rows asks num_queued()
// which of the rows it added are committed, and shows only those.
//
// A stored row that does not read back (a damaged file, a hand edit) does not lock the job: it
// counts as unfinished (a resume runs it again) and readers are told its row index and why.
//
// Not thread-safe: one thread owns a JobStore. Other connections (another JobStore on the same
// file, the sqlite3 shell, `sluice jobs list`) may read at the same time; WAL lets them.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/jobs/job_info.h"
#include "engine/jobs/pair_pick.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class SqliteDb;
class SqliteStatement;

// A stored row that does not read back, with the reason (naming the file, row and column).
struct UnreadableRow {
  int64_t row_index = 0;
  std::string error;

  bool operator==(const UnreadableRow&) const = default;
};

class JobStore {
 public:
  // What create() does when a file is already at the path.
  enum class IfExists : uint8_t {
    Fail,                  // refuse: the path holds something
    ReplaceUninitialised,  // replace a job file that never got its first commit (it holds no
                           // rows; see is_uninitialised_job_file), refuse anything else
  };

  // Commit the queue once this many finished rows wait in it.
  static constexpr size_t kCommitBatchRows = 64;
  // ... or once this long has passed since the last commit.
  static constexpr std::chrono::milliseconds kCommitInterval{1000};

  // Creates a new job file at path with info (created_at is set to now): written as
  // "<path>.creating-<pid>" and moved to path once complete (what a killed create() left
  // behind is removed by the next). Throws Error naming the file if path holds something
  // if_exists does not allow replacing, or it cannot be written.
  static std::unique_ptr<JobStore> create(const std::string& path, const JobInfo& info,
                                          IfExists if_exists = IfExists::Fail);
  // Opens an existing job file. Throws Error naming the file if it is missing, not a Sluice job
  // (or not SQLite at all), uninitialised (it then says so: it holds no rows), or of a newer
  // schema version.
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
  // Adds notes of the job's grammars (JobInfo::grammar_notes) not held yet, up to
  // kMaxJobGrammarNotes (the rest, and has_more, set has_more_grammar_notes); stored at once when
  // anything changed.
  void add_grammar_notes(const std::vector<std::string>& notes, bool has_more);

  // Rows that must not run again on resume: every stored result (done, failed, skipped) that
  // reads back, sorted. Rows that do not are left out, so a resume runs them again, and are
  // appended to *unreadable when given. Reads every stored row once.
  std::vector<int64_t> finished_row_indices(std::vector<UnreadableRow>* unreadable = nullptr) const;
  // Returns true when a result for row_index is stored or queued.
  bool has_result(int64_t row_index) const;

  // Queues a finished row (status Done, Failed or Skipped; Pending throws Error). A result for a
  // row_index already stored replaces it (a retried failed row). Commits the queue when
  // kCommitBatchRows rows wait or kCommitInterval has passed since the last commit.
  void add_result(const RowResult& result);
  // Commits every queued result in one transaction. Throws Error naming the file on failure
  // (the queue is kept, so a later flush can retry).
  void flush();
  // Returns how many added results wait for a commit: the last ones added, in order; every
  // result added before them is committed.
  size_t num_queued() const { return queue_.size(); }

  // Returns the number of stored results by their status column (rows with an unknown status
  // count as unreadable; other damage shows only when a row is read), and the source's row count.
  JobCounts counts() const;
  // Returns the stored result for row_index, or nullopt. Throws Error when it does not read back.
  std::optional<RowResult> result(int64_t row_index) const;
  // Calls fn with every stored result in row_index order, reading them through an SQLite cursor
  // (one row in memory at a time). A row that does not read back goes to on_unreadable instead,
  // or, without one, throws Error naming the file, row and column. fn may read this store but
  // must not add results.
  void for_each_result(
      const std::function<void(const RowResult&)>& fn,
      const std::function<void(const UnreadableRow&)>& on_unreadable = nullptr) const;

  // Returns the job's DPO pair picks by row index (pair_pick_store.h writes them); empty for a
  // job without any. Throws Error naming the file and row for a pick that cannot be a pair.
  std::map<int64_t, PairPick> pair_picks() const;

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
