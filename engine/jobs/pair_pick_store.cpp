#include "engine/jobs/pair_pick_store.h"

#include <utility>

#include "engine/core/error.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/sqlite_db.h"

namespace sluice {
namespace {

bool has_pick_table(SqliteDb& db) {
  return db.query_int(
             "SELECT COUNT(*) FROM sqlite_schema WHERE type = 'table' AND name = 'pair_picks'") > 0;
}

// Throws Error naming where and the row when pick cannot be a DPO pair.
void check_pick(const PairPick& pick, const std::string& where) {
  if (pick.row_index < 0) fail(where, ": pair pick for row ", pick.row_index, ": negative row");
  if (pick.is_unusable && pick.is_tie)
    fail(where, ": pair pick for row ", pick.row_index, ": both unusable and a tie");
  if (pick.is_unusable) return;
  if (pick.chosen_sample_idx < 0 || pick.rejected_sample_idx < 0) {
    fail(where, ": pair pick for row ", pick.row_index, ": negative sample index (chosen ",
         pick.chosen_sample_idx, ", rejected ", pick.rejected_sample_idx, ")");
  }
  if (pick.chosen_sample_idx == pick.rejected_sample_idx) {
    fail(where, ": pair pick for row ", pick.row_index, ": sample ", pick.chosen_sample_idx,
         " is both chosen and rejected");
  }
}

// The is_unusable column holds the kind of decision (job_schema.h): no schema change, and an
// older Sluice, which reads any non-zero value as unusable, leaves a tie out of its export as
// this one does.
constexpr int64_t kDecisionPair = 0;
constexpr int64_t kDecisionUnusable = 1;
constexpr int64_t kDecisionTie = 2;

// Reads the pick at statement's current row (columns as kSelectPicks orders them).
PairPick read_pick(const SqliteStatement& statement, const std::string& where) {
  PairPick pick;
  pick.row_index = statement.column_int(0);
  const int64_t chosen = statement.column_int(1);
  const int64_t rejected = statement.column_int(2);
  // Sample indices are ints; a hand-edited value out of that range is no sample.
  constexpr int64_t kMaxSampleIdx = 1 << 30;
  if (chosen > kMaxSampleIdx || rejected > kMaxSampleIdx) {
    fail(where, ": pair pick for row ", pick.row_index, ": sample index out of range (chosen ",
         chosen, ", rejected ", rejected, ")");
  }
  pick.chosen_sample_idx = static_cast<int>(chosen);
  pick.rejected_sample_idx = static_cast<int>(rejected);
  const int64_t decision = statement.column_int(3);
  pick.is_tie = decision == kDecisionTie;
  // Any other non-zero value (a later kind of decision) leaves the row out, as unusable does.
  pick.is_unusable = decision != kDecisionPair && decision != kDecisionTie;
  check_pick(pick, where);
  return pick;
}

constexpr const char* kSelectPicks =
    "SELECT row_index, chosen_sample, rejected_sample, is_unusable FROM pair_picks";

}  // namespace

std::map<int64_t, PairPick> read_pair_picks(SqliteDb& db) {
  std::map<int64_t, PairPick> picks;
  if (!has_pick_table(db)) return picks;
  SqliteStatement select(db, kSelectPicks);
  while (select.step()) {
    const PairPick pick = read_pick(select, db.path());
    picks.emplace(pick.row_index, pick);
  }
  return picks;
}

std::unique_ptr<PairPickStore> PairPickStore::open(const std::string& path) {
  auto db = open_existing_job_db(path);
  JobInfo info = read_job_meta(*db);
  configure_job_connection(*db);
  return std::unique_ptr<PairPickStore>(new PairPickStore(std::move(db), std::move(info)));
}

PairPickStore::PairPickStore(std::unique_ptr<SqliteDb> db, JobInfo info)
    : db_(std::move(db)), info_(std::move(info)) {}

PairPickStore::~PairPickStore() = default;

const std::string& PairPickStore::path() const {
  return db_->path();
}

std::optional<PairPick> PairPickStore::pick(int64_t row_index) const {
  if (!has_pick_table(*db_)) return std::nullopt;
  SqliteStatement select(*db_, str_cat(kSelectPicks, " WHERE row_index = ?").c_str());
  select.bind_int(1, row_index);
  if (!select.step()) return std::nullopt;
  return read_pick(select, path());
}

std::map<int64_t, PairPick> PairPickStore::picks() const {
  return read_pair_picks(*db_);
}

void PairPickStore::set(const PairPick& pick) {
  check_pick(pick, path());
  upgrade_job_schema(*db_);
  SqliteStatement insert(*db_,
                         "INSERT OR REPLACE INTO pair_picks (row_index, chosen_sample, "
                         "rejected_sample, is_unusable) VALUES (?, ?, ?, ?)");
  insert.bind_int(1, pick.row_index);
  insert.bind_int(2, pick.chosen_sample_idx);
  insert.bind_int(3, pick.rejected_sample_idx);
  insert.bind_int(4, pick.is_unusable ? kDecisionUnusable
                     : pick.is_tie    ? kDecisionTie
                                      : kDecisionPair);
  insert.step();
}

void PairPickStore::clear(int64_t row_index) {
  if (!has_pick_table(*db_)) return;
  SqliteStatement remove(*db_, "DELETE FROM pair_picks WHERE row_index = ?");
  remove.bind_int(1, row_index);
  remove.step();
}

}  // namespace sluice
