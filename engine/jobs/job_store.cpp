#include "engine/jobs/job_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

#include "engine/core/error.h"
#include "engine/jobs/abandoned_files.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/pair_pick_store.h"
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

[[noreturn]] void fail_exists(const std::string& path) {
  fail(path, ": already exists; a new job needs a new file (open the existing one to resume)");
}

constexpr const char* kSideFileSuffixes[] = {"-wal", "-shm", "-journal"};
constexpr const char* kCreatingInfix = ".creating-";

// Removes path's SQLite side files. Called only where no connection can own them: path was just
// created, or is an uninitialised file about to be replaced.
void remove_side_files(const std::string& path) {
  std::error_code ignored;
  for (const char* suffix : kSideFileSuffixes) std::filesystem::remove(path + suffix, ignored);
}

// Creates a new file at temp_path (failing if anything is there) holding a complete, empty job.
// The file is private until published, so it is written without a journal and synced once.
void write_new_job_file(const std::string& temp_path, const JobInfo& info) {
  const int fd = ::open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) fail(temp_path, ": cannot create the job file: ", std::strerror(errno));
  ::close(fd);
  {
    SqliteDb db(temp_path, SqliteDb::Mode::CreateNew);
    db.exec("PRAGMA journal_mode = OFF");
    db.exec("PRAGMA synchronous = OFF");
    create_job_schema(db, info);
  }
  const int sync_fd = ::open(temp_path.c_str(), O_RDONLY | O_CLOEXEC);
  const bool is_synced = sync_fd >= 0 && ::fsync(sync_fd) == 0;
  const int sync_errno = errno;
  if (sync_fd >= 0) ::close(sync_fd);
  if (!is_synced) fail(temp_path, ": cannot sync the job file: ", std::strerror(sync_errno));
}

// Moves the finished temp_path to path: over path when replacing it, otherwise only if nothing
// is there (link() fails with EEXIST rather than replace a file created meanwhile). Side files
// found beside path then are stale, and removed: SQLite would replay a stale write-ahead log into
// the new file.
void publish_job_file(const std::string& temp_path, const std::string& path, bool is_replacing) {
  if (is_replacing) {
    remove_side_files(path);
    if (::rename(temp_path.c_str(), path.c_str()) != 0)
      fail(path, ": cannot replace the job file: ", std::strerror(errno));
    return;
  }
  if (::link(temp_path.c_str(), path.c_str()) == 0) {
    ::unlink(temp_path.c_str());
  } else if (errno == EEXIST) {
    fail_exists(path);
  } else if (errno == EPERM || errno == EOPNOTSUPP) {
    // A file system without hard links (FAT, some FUSE ones): check, then rename.
    if (std::filesystem::exists(path)) fail_exists(path);
    if (::rename(temp_path.c_str(), path.c_str()) != 0)
      fail(path, ": cannot create the job file: ", std::strerror(errno));
  } else {
    fail(path, ": cannot create the job file: ", std::strerror(errno));
  }
  remove_side_files(path);
}

}  // namespace

std::unique_ptr<JobStore> JobStore::create(const std::string& path, const JobInfo& info,
                                           IfExists if_exists) {
  std::error_code error;
  const bool exists = std::filesystem::exists(std::filesystem::symlink_status(path, error));
  const bool is_replacing =
      exists && if_exists == IfExists::ReplaceUninitialised && is_uninitialised_job_file(path);
  if (exists && !is_replacing) fail_exists(path);
  JobInfo stored = info;
  stored.created_at = utc_timestamp_now();
  // The job is built beside path and appears there complete, so a run killed at any moment
  // leaves either no job file or one with its info: never a file that cannot be resumed. What a
  // create() killed before publishing its file left behind goes first.
  remove_abandoned_files(path, kCreatingInfix);
  const std::string temp_path = str_cat(path, kCreatingInfix, ::getpid());
  try {
    write_new_job_file(temp_path, stored);
    publish_job_file(temp_path, path, is_replacing);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp_path, ignored);
    throw;
  }
  try {
    auto db = open_existing_job_db(path);
    configure_job_connection(*db);
    return std::unique_ptr<JobStore>(new JobStore(std::move(db), std::move(stored)));
  } catch (...) {
    // Nobody else has this file yet (it appeared just now, empty of rows): take it back.
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    remove_side_files(path);
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

void JobStore::add_grammar_notes(const std::vector<std::string>& notes, bool has_more) {
  JobInfo updated = info_;
  for (const std::string& note : notes) {
    std::vector<std::string>& held = updated.grammar_notes;
    if (std::find(held.begin(), held.end(), note) != held.end()) continue;
    if (held.size() < kMaxJobGrammarNotes) {
      held.push_back(note);
    } else {
      updated.has_more_grammar_notes = true;
    }
  }
  updated.has_more_grammar_notes |= has_more;
  if (updated == info_) return;
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

std::vector<int64_t> JobStore::finished_row_indices(std::vector<UnreadableRow>* unreadable) const {
  std::vector<int64_t> indices;
  for_each_result([&](const RowResult& row) { indices.push_back(row.row_index); },
                  [&](const UnreadableRow& row) {
                    if (unreadable != nullptr) unreadable->push_back(row);
                  });
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
      counts.unreadable += count;
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

void JobStore::for_each_result(
    const std::function<void(const RowResult&)>& fn,
    const std::function<void(const UnreadableRow&)>& on_unreadable) const {
  commit_queue();
  SqliteStatement select(*db_, select_sql("ORDER BY row_index").c_str());
  while (select.step()) {
    std::optional<RowResult> row;
    try {
      row = read_row_result(select, path());
    } catch (const Error& e) {
      if (!on_unreadable) throw;
      // row_index is the table's INTEGER PRIMARY KEY, so it always reads as an integer.
      on_unreadable(UnreadableRow{select.column_int(0), e.what()});
      continue;
    }
    fn(*row);
  }
}

std::map<int64_t, PairPick> JobStore::pair_picks() const {
  return read_pair_picks(*db_);
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
