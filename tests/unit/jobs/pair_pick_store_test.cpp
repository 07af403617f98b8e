#include "engine/jobs/pair_pick_store.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "engine/core/error.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using test::error_of;
using test::make_job_info;
using test::make_row;

std::string picks_job_path(const std::string& name) {
  return test::make_temp_dir("pair-picks") + "/" + name + ".sluicejob";
}

bool text_contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

PairPick pick_of(int64_t row_index, int chosen, int rejected) {
  PairPick pick;
  pick.row_index = row_index;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  return pick;
}

PairPick unusable(int64_t row_index) {
  PairPick pick;
  pick.row_index = row_index;
  pick.is_unusable = true;
  return pick;
}

// A job file as schema version 1 wrote it, spelled out here (not made by the current code): the
// meta and rows tables only, schema_version "1", one done row.
std::string write_version_1_job(const std::string& name) {
  const std::string path = picks_job_path(name);
  SqliteDb db(path, SqliteDb::Mode::CreateNew);
  db.exec("PRAGMA application_id = 1399605858");  // 0x536c4a62, "SlJb"
  db.exec(R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
CREATE TABLE rows (
  row_index INTEGER PRIMARY KEY NOT NULL, line INTEGER NOT NULL, status TEXT NOT NULL,
  error TEXT NOT NULL, input TEXT NOT NULL, messages TEXT NOT NULL, prompt TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL, samples TEXT NOT NULL, seed INTEGER NOT NULL,
  queue_ms REAL, ttft_ms REAL, total_ms REAL);
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO meta VALUES ('info', '{"source_path": "/data/in.jsonl", "source_sha256": "ab",
  "source_size_bytes": 10, "source_format": "jsonl", "model_path": "/m.bin",
  "model_identity": "m", "params": {"n": 2}, "created_at": "2025-01-31T12:00:00Z",
  "total_rows": 1}');
INSERT INTO rows VALUES (0, 1, 'done', '', '{"instruction": "hi"}', '[]', 'hi', 3,
  '[{"output": "a", "output_tokens": 1, "finish_reason": "stop", "output_token_ids": [],
     "extra": {}}, {"output": "bb", "output_tokens": 1, "finish_reason": "stop",
     "output_token_ids": [], "extra": {}}]', 7, 1.0, 2.0, 3.0);
)sql");
  return path;
}

TEST(PairPickStore, StoresReplacesAndClearsPicks) {
  const std::string path = picks_job_path("round-trip");
  JobStore::create(path, make_job_info(3));
  {
    const auto picks = PairPickStore::open(path);
    EXPECT_TRUE(picks->picks().empty());
    EXPECT_FALSE(picks->pick(0));
    picks->set(pick_of(0, 1, 0));
    picks->set(pick_of(4, 2, 1));
    picks->set(unusable(7));
    picks->set(pick_of(4, 0, 2));  // replaces row 4's pick
    picks->clear(9);               // no pick there: nothing happens
  }
  // A new connection (as after a restart) reads what was committed.
  const auto reopened = PairPickStore::open(path);
  const std::map<int64_t, PairPick> expected = {
      {0, pick_of(0, 1, 0)}, {4, pick_of(4, 0, 2)}, {7, unusable(7)}};
  EXPECT_EQ(reopened->picks(), expected);
  EXPECT_EQ(reopened->pick(4), pick_of(4, 0, 2));
  reopened->clear(4);
  EXPECT_FALSE(reopened->pick(4));
  EXPECT_EQ(reopened->picks().size(), 2u);
  // The job's writer reads the same picks (the dpo export goes through it).
  EXPECT_EQ(JobStore::open(path)->pair_picks(), reopened->picks());
}

TEST(PairPickStore, RefusesPicksThatAreNoPair) {
  const std::string path = picks_job_path("bad-picks");
  JobStore::create(path, make_job_info(2));
  const auto picks = PairPickStore::open(path);
  std::string message = error_of([&] { picks->set(pick_of(3, 1, 1)); });
  EXPECT_TRUE(text_contains(message, path)) << message;
  EXPECT_TRUE(text_contains(message, "row 3")) << message;
  EXPECT_TRUE(text_contains(message, "both chosen and rejected")) << message;
  message = error_of([&] { picks->set(pick_of(5, -1, 0)); });
  EXPECT_TRUE(text_contains(message, "row 5")) << message;
  EXPECT_TRUE(picks->picks().empty());
  // An unusable mark names no samples, so its sample fields are not checked.
  PairPick mark = unusable(6);
  mark.chosen_sample_idx = mark.rejected_sample_idx = 0;
  picks->set(mark);
  EXPECT_EQ(picks->pick(6), mark);
}

TEST(PairPickStore, DamagedStoredPickNamesFileAndRow) {
  const std::string path = picks_job_path("damaged");
  JobStore::create(path, make_job_info(2));
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    db.exec("INSERT INTO pair_picks VALUES (12, 1, 1, 0)");
  }
  const std::string message = error_of([&] { PairPickStore::open(path)->picks(); });
  EXPECT_TRUE(text_contains(message, path)) << message;
  EXPECT_TRUE(text_contains(message, "row 12")) << message;
}

TEST(PairPickStore, ReadsAVersion1JobAndUpgradesItOnTheFirstPick) {
  const std::string path = write_version_1_job("v1");
  {
    // Reading (the table, the store, the picks) leaves the file as it was.
    const auto store = JobStore::open(path);
    EXPECT_EQ(store->counts().done, 1);
    EXPECT_TRUE(store->pair_picks().empty());
    const auto picks = PairPickStore::open(path);
    EXPECT_TRUE(picks->picks().empty());
    EXPECT_FALSE(picks->pick(0));
    picks->clear(0);
  }
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    EXPECT_EQ(read_job_schema_version(db), 1);
  }
  PairPickStore::open(path)->set(pick_of(0, 1, 0));
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    EXPECT_EQ(read_job_schema_version(db), 2);
  }
  const auto store = JobStore::open(path);
  EXPECT_EQ(store->pair_picks(), (std::map<int64_t, PairPick>{{0, pick_of(0, 1, 0)}}));
  ASSERT_TRUE(store->result(0));
  EXPECT_EQ(store->result(0)->samples.at(1).output, "bb");  // the rows are untouched
}

// A tie is stored in the is_unusable column as 2 (job_schema.h), so an older Sluice, which reads
// any non-zero value as unusable, leaves the row out as this one does; the schema version stays.
TEST(PairPickStore, StoresATieWithoutAVersionChange) {
  const std::string path = picks_job_path("tie");
  JobStore::create(path, make_job_info(3));
  PairPick tie = pick_of(4, 2, 0);
  tie.is_tie = true;
  PairPickStore::open(path)->set(tie);
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    EXPECT_EQ(db.query_int("SELECT is_unusable FROM pair_picks WHERE row_index = 4"), 2);
    EXPECT_EQ(read_job_schema_version(db), 2);
    // A value this build does not know (a later kind of decision) reads as unusable.
    db.exec("INSERT INTO pair_picks VALUES (9, 0, 1, 7)");
  }
  const auto store = JobStore::open(path);
  const std::map<int64_t, PairPick> picks = store->pair_picks();
  ASSERT_EQ(picks.size(), 2u);
  EXPECT_EQ(picks.at(4), tie);
  EXPECT_FALSE(picks.at(4).is_unusable);
  EXPECT_TRUE(picks.at(9).is_unusable);
  EXPECT_FALSE(picks.at(9).is_tie);
  // A tie names two samples, as a pick does; unusable and a tie at once is no decision.
  tie.rejected_sample_idx = 2;
  std::string message = error_of([&] { PairPickStore::open(path)->set(tie); });
  EXPECT_TRUE(text_contains(message, "both chosen and rejected")) << message;
  PairPick both = unusable(5);
  both.is_tie = true;
  message = error_of([&] { PairPickStore::open(path)->set(both); });
  EXPECT_TRUE(text_contains(message, "both unusable and a tie")) << message;
}

TEST(PairPickStore, NewJobsAreCurrentVersion) {
  const std::string path = picks_job_path("new");
  JobStore::create(path, make_job_info(2))->add_result(make_row(0));
  SqliteDb db(path, SqliteDb::Mode::OpenExisting);
  EXPECT_EQ(read_job_schema_version(db), 2);
}

}  // namespace
}  // namespace sluice
