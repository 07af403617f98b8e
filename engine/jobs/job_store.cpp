#include "engine/jobs/job_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "engine/core/error.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/row_codec.h"
#include "engine/jobs/sqlite_db.h"

namespace sluice {
namespace {

std::string insert_sql() {
  return str_cat("INSERT OR REPLACE INTO rows (", kRowColumns,
                 ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
}

std::string select_sql(const char* where_clause) {
  return str_cat("SELECT ", kRowColumns, " FROM rows ", where_clause);
}

// Creates path as an empty file, failing if anything is there: O_EXCL makes the check and the
// creation one step, so create() never takes over (or, on failure, deletes) another's file.
// SQLite treats an empty file as an empty database.
void claim_new_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0 && errno == EEXIST)
    fail(path, ": already exists; a new job needs a new file (open the existing one to resume)");
  if (fd < 0) fail(path, ": cannot create the job file: ", std::strerror(errno));
  ::close(fd);
}

// Removes a job file that create() could not finish, with its WAL side files.
void remove_job_files(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::filesystem::remove(path + suffix, ignored);
}

}  // namespace

std::unique_ptr<JobStore> JobStore::create(const std::string& path, const JobInfo& info) {
  claim_new_file(path);
  JobInfo stored = info;
  stored.created_at = utc_timestamp_now();
  try {
    auto db = std::make_unique<SqliteDb>(path, SqliteDb::Mode::CreateNew);
    configure_job_connection(*db);
    create_job_schema(*db, stored);
    return std::unique_ptr<JobStore>(new JobStore(std::move(db), std::move(stored)));
  } catch (...) {
    remove_job_files(path);
    throw;
  }
}

std::unique_ptr<JobStore> JobStore::open(const std::string& path) {
  auto db = open_existing_job_db(path);
  JobInfo info = read_job_meta(*db);
  configure_job_connection(*db);
  return std::unique_ptr<JobStore>(new JobStore(std::move(db), std::move(info)));
}

JobStore::JobStore(std::unique_ptr<SqliteDb> db, JobInfo info)
    : db_(std::move(db)),
      insert_statement_(std::make_unique<SqliteStatement>(*db_, insert_sql().c_str())),
      info_(std::move(info)),
      last_commit_time_(std::chrono::steady_clock::now()) {}

JobStore::~JobStore() {
  try {
    commit_queue();
  } catch (const Error&) {
    // Nothing to report to from here; flush() is where a caller learns of a failed write.
  }
  insert_statement_.reset();
}

const std::string& JobStore::path() const {
  return db_->path();
}

void JobStore::set_total_rows(int64_t total) {
  JobInfo updated = info_;
  updated.total_rows = total;
  write_job_info(*db_, updated);
  info_ = std::move(updated);
}

void JobStore::add_result(const RowResult& result) {
  // Checked here, not at commit, so one bad row can never block the rows queued with it.
  if (result.status == RowStatus::Pending)
    fail(path(), ": row ", result.row_index, ": a pending row is not a result");
  if (result.row_index < 0) fail(path(), ": row ", result.row_index, ": negative row index");
  queue_.push_back(result);
  const auto now = std::chrono::steady_clock::now();
  if (queue_.size() >= kCommitBatchRows || now - last_commit_time_ >= kCommitInterval)
    commit_queue();
}

void JobStore::flush() {
  commit_queue();
}

void JobStore::commit_queue() const {
  if (queue_.empty()) return;
  if (is_in_snapshot_) fail(path(), ": cannot commit results inside a read snapshot");
  db_->exec("BEGIN IMMEDIATE");
  try {
    for (const RowResult& result : queue_) {
      insert_statement_->reset();
      bind_row_result(*insert_statement_, result);
      insert_statement_->step();
    }
    insert_statement_->reset();
    db_->exec("COMMIT");
  } catch (...) {
    insert_statement_->reset();
    db_->rollback_quietly();
    throw;
  }
  queue_.clear();
  last_commit_time_ = std::chrono::steady_clock::now();
}

std::vector<int64_t> JobStore::finished_row_indices() const {
  commit_queue();
  SqliteStatement select(*db_, "SELECT row_index FROM rows ORDER BY row_index");
  std::vector<int64_t> indices;
  while (select.step()) indices.push_back(select.column_int(0));
  return indices;
}

bool JobStore::has_result(int64_t row_index) const {
  for (const RowResult& queued : queue_) {
    if (queued.row_index == row_index) return true;
  }
  SqliteStatement select(*db_, "SELECT 1 FROM rows WHERE row_index = ?");
  select.bind_int(1, row_index);
  return select.step();
}

JobCounts JobStore::counts() const {
  commit_queue();
  SqliteStatement select(*db_, "SELECT status, COUNT(*) FROM rows GROUP BY status");
  JobCounts counts;
  counts.total_rows = info_.total_rows;
  while (select.step()) {
    const std::string status = select.column_text(0);
    const int64_t count = select.column_int(1);
    if (status == "done") {
      counts.done = count;
    } else if (status == "failed") {
      counts.failed = count;
    } else if (status == "skipped") {
      counts.skipped = count;
    } else {
      fail(path(), ": ", count, " rows have the unknown status '", status, "'");
    }
  }
  return counts;
}

std::optional<RowResult> JobStore::result(int64_t row_index) const {
  commit_queue();
  SqliteStatement select(*db_, select_sql("WHERE row_index = ?").c_str());
  select.bind_int(1, row_index);
  if (!select.step()) return std::nullopt;
  return read_row_result(select, path());
}

void JobStore::for_each_result(const std::function<void(const RowResult&)>& fn) const {
  commit_queue();
  SqliteStatement select(*db_, select_sql("ORDER BY row_index").c_str());
  while (select.step()) fn(read_row_result(select, path()));
}

void JobStore::with_snapshot(const std::function<void()>& fn) const {
  if (is_in_snapshot_) {
    fn();
    return;
  }
  commit_queue();
  // A deferred BEGIN takes its snapshot at the first read and keeps it until COMMIT.
  db_->exec("BEGIN");
  is_in_snapshot_ = true;
  try {
    fn();
  } catch (...) {
    is_in_snapshot_ = false;
    db_->rollback_quietly();
    throw;
  }
  is_in_snapshot_ = false;
  db_->exec("COMMIT");
}

}  // namespace sluice
