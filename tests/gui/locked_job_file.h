// A job file held locked by another connection, as a job committing a big batch or another
// process would: any read of it blocks (SQLite's busy timeout, seconds) until release(). A view
// that reads on the GUI thread freezes while it is held; one that reads on the pool does not.
#pragma once

#include <memory>
#include <string>

#include "engine/jobs/sqlite_db.h"

namespace sluice::test {

class LockedJobFile {
 public:
  enum class Lock {
    // Nobody reads or writes: taken before any other connection has the file open (exclusive
    // locking mode keeps the lock its first access takes, which other readers cannot share).
    Everything,
    // Readers get through (WAL), writers wait: a write transaction held open.
    Writes,
  };

  explicit LockedJobFile(const std::string& path, Lock lock = Lock::Everything)
      : m_db(std::make_unique<SqliteDb>(path, SqliteDb::Mode::OpenExisting)) {
    if (lock == Lock::Everything) m_db->exec("PRAGMA locking_mode = EXCLUSIVE");
    m_db->exec(lock == Lock::Everything ? "BEGIN EXCLUSIVE" : "BEGIN IMMEDIATE");
    m_db->query_int("SELECT count(*) FROM sqlite_master");
  }
  // Ends the transaction and closes the connection: readers and writers get through.
  void release() {
    if (!m_db) return;
    m_db->rollback_quietly();
    m_db.reset();
  }

 private:
  std::unique_ptr<SqliteDb> m_db;
};

// How long the GUI thread may be busy with a call before a person would notice.
constexpr qint64 kMaxGuiCallMs = 1000;

}  // namespace sluice::test
