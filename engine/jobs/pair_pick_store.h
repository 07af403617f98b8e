// The DPO picks of one job file: read and written through their own connection, so the app can
// record a pick while the job's JobStore (on the worker thread) keeps committing rows; WAL and
// the busy timeout let the two writers take turns.
//
// Picks are read from a job of any schema this build reads: a version 1 file has no pick table
// and so no picks. The first set() or clear() upgrades such a file to the current version (see
// job_schema.h); nothing else here changes the file's schema.
//
// Not thread-safe: one thread owns a PairPickStore.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "engine/jobs/job_info.h"
#include "engine/jobs/pair_pick.h"

namespace sluice {

class SqliteDb;

// Returns every pick stored in db by row index (empty for a job without a pick table). Throws
// Error naming the file and row for a pick that names a negative sample, or chosen == rejected.
std::map<int64_t, PairPick> read_pair_picks(SqliteDb& db);

class PairPickStore {
 public:
  // Opens the job file at path. Throws Error naming the file if it is missing, not a Sluice job,
  // uninitialised, or of a newer schema version.
  static std::unique_ptr<PairPickStore> open(const std::string& path);

  ~PairPickStore();
  PairPickStore(const PairPickStore&) = delete;
  PairPickStore& operator=(const PairPickStore&) = delete;

  const std::string& path() const;
  const JobInfo& info() const { return info_; }

  // Returns the pick stored for row_index, or nullopt. Throws Error as read_pair_picks does.
  std::optional<PairPick> pick(int64_t row_index) const;
  // Returns every stored pick by row index.
  std::map<int64_t, PairPick> picks() const;

  // Stores pick, replacing the row's earlier one; committed when it returns. Throws Error naming
  // the file and row when pick is both unusable and a tie, or is not unusable (a pair or a tie)
  // and names a negative sample or the same sample twice (a pick is not checked against the
  // row's samples: the row may not be stored yet).
  void set(const PairPick& pick);
  // Removes the row's pick (the row goes back to the export's automatic rule); no-op without one.
  void clear(int64_t row_index);

 private:
  PairPickStore(std::unique_ptr<SqliteDb> db, JobInfo info);

  std::unique_ptr<SqliteDb> db_;
  JobInfo info_;
};

}  // namespace sluice
