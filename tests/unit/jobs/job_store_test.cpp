#include "engine/jobs/job_store.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "engine/core/error.h"
#include "engine/jobs/job_listing.h"
#include "engine/jobs/job_schema.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using test::error_of;
using test::make_failed_row;
using test::make_job_info;
using test::make_row;
using test::make_skipped_row;

std::string job_path(const std::string& name) {
  return test::make_temp_dir("job-store") + "/" + name + ".sluicejob";
}

// Returns true for "YYYY-MM-DDTHH:MM:SSZ".
bool is_iso8601_utc(const std::string& text) {
  const std::string pattern = "dddd-dd-ddTdd:dd:ddZ";
  if (text.size() != pattern.size()) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool ok = pattern[i] == 'd' ? (text[i] >= '0' && text[i] <= '9') : text[i] == pattern[i];
    if (!ok) return false;
  }
  return true;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(JobStore, CreateStoresInfoAndSetsCreatedAt) {
  const std::string path = job_path("info");
  JobInfo expected = make_job_info();
  {
    const auto store = JobStore::create(path, expected);
    EXPECT_EQ(store->path(), path);
    EXPECT_TRUE(is_iso8601_utc(store->info().created_at)) << store->info().created_at;
    expected.created_at = store->info().created_at;
    EXPECT_EQ(store->info(), expected);
    EXPECT_EQ(store->counts().total_rows, -1);
    store->set_total_rows(250);
  }
  const auto reopened = JobStore::open(path);
  expected.total_rows = 250;
  EXPECT_EQ(reopened->info(), expected);
  EXPECT_EQ(reopened->counts().total_rows, 250);
}

// Catches grammar notes kept only in memory, noted twice (a resumed run meets its schemas
// again), kept past the bound, or written into jobs that have none (older versions read them).
TEST(JobStore, GrammarNotesAreKeptOnceWithinTheBound) {
  const std::string path = job_path("notes");
  {
    const auto store = JobStore::create(path, make_job_info());
    EXPECT_FALSE(job_info_to_json(store->info()).contains("grammar_notes"));
    store->add_grammar_notes({"s.json: /a: note", "s.json: /b: note"}, false);
    store->add_grammar_notes({"s.json: /a: note"}, false);
  }
  std::vector<std::string> expected = {"s.json: /a: note", "s.json: /b: note"};
  EXPECT_EQ(JobStore::open(path)->info().grammar_notes, expected);
  EXPECT_FALSE(JobStore::open(path)->info().has_more_grammar_notes);
  {
    const auto store = JobStore::open(path);
    std::vector<std::string> many;
    for (size_t i = 0; i < kMaxJobGrammarNotes; ++i) many.push_back(str_cat("r: /", i, ": note"));
    store->add_grammar_notes(many, false);
  }
  const auto reopened = JobStore::open(path);
  EXPECT_EQ(reopened->info().grammar_notes.size(), kMaxJobGrammarNotes);
  EXPECT_EQ(reopened->info().grammar_notes[1], expected[1]);
  EXPECT_TRUE(reopened->info().has_more_grammar_notes);
  EXPECT_EQ(job_info_from_json(job_info_to_json(reopened->info()), path), reopened->info());
}

TEST(JobStore, CreateRefusesAnExistingFile) {
  const std::string path = job_path("exists");
  JobStore::create(path, make_job_info());
  const std::string message = error_of([&] { JobStore::create(path, make_job_info()); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "already exists")) << message;
}

TEST(JobStore, CreateInAMissingDirectoryNamesTheFile) {
  const std::string path = test::make_temp_dir("job-store") + "/no/such/dir/job.sluicejob";
  const std::string message = error_of([&] { JobStore::create(path, make_job_info()); });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(JobStore, OpenMissingFileNamesIt) {
  const std::string path = job_path("missing");
  const std::string message = error_of([&] { JobStore::open(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_FALSE(std::filesystem::exists(path)) << "open must not create the file";
}

TEST(JobStore, AddFlushReopenGivesBackEveryField) {
  const std::string path = job_path("round-trip");
  {
    const auto store = JobStore::create(path, make_job_info());
    store->add_result(make_row(0));
    store->add_result(make_failed_row(1));
    store->add_result(make_skipped_row(2));
    store->flush();
    EXPECT_EQ(store->result(0), make_row(0));
    EXPECT_EQ(store->result(1), make_failed_row(1));
    EXPECT_FALSE(store->result(3).has_value());
  }
  const auto store = JobStore::open(path);
  EXPECT_EQ(store->result(0), make_row(0));
  EXPECT_EQ(store->result(1), make_failed_row(1));
  EXPECT_EQ(store->result(2), make_skipped_row(2));
  EXPECT_EQ(store->finished_row_indices(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(store->has_result(2));
  EXPECT_FALSE(store->has_result(3));
}

// A sample's kept validity and reasoning read back; a sample without them reads as before.
TEST(JobStore, ValidityAndReasoningReadBack) {
  const std::string path = job_path("validity");
  RowResult row = make_row(0);
  row.samples.front().valid = false;
  row.samples.front().invalid_reason = "/age: -1 is less than the minimum 0";
  row.samples.front().reasoning = "Think first.";
  row.samples.front().reasoning_tokens = 3;
  RowResult plain = make_row(1);
  {
    const auto store = JobStore::create(path, make_job_info());
    store->add_result(row);
    store->add_result(plain);
    store->flush();
  }
  const auto store = JobStore::open(path);
  EXPECT_EQ(store->result(0), row);
  EXPECT_EQ(store->result(1), plain);
  EXPECT_FALSE(store->result(1)->samples.front().valid.has_value());
}

TEST(JobStore, ResultsSurviveACloseWithoutFlush) {
  const std::string path = job_path("no-flush");
  {
    const auto store = JobStore::create(path, make_job_info());
    for (int64_t i = 0; i < 5; ++i) store->add_result(make_row(i));
  }
  const auto store = JobStore::open(path);
  for (int64_t i = 0; i < 5; ++i) EXPECT_EQ(store->result(i), make_row(i)) << "row " << i;
}

TEST(JobStore, ReadsSeeQueuedResults) {
  const auto store = JobStore::create(job_path("queued"), make_job_info());
  store->add_result(make_row(7));
  EXPECT_TRUE(store->has_result(7));
  EXPECT_EQ(store->finished_row_indices(), std::vector<int64_t>{7});
  EXPECT_EQ(store->result(7), make_row(7));
}

TEST(JobStore, RetriedRowReplacesTheStoredResult) {
  const std::string path = job_path("retry");
  const auto store = JobStore::create(path, make_job_info());
  store->add_result(make_failed_row(5));
  store->flush();
  EXPECT_EQ(store->counts().failed, 1);
  store->add_result(make_row(5));
  store->flush();
  const JobCounts counts = store->counts();
  EXPECT_EQ(counts.failed, 0);
  EXPECT_EQ(counts.done, 1);
  EXPECT_EQ(store->result(5), make_row(5));
  EXPECT_EQ(store->finished_row_indices(), std::vector<int64_t>{5});
}

TEST(JobStore, ForEachResultIsInRowOrder) {
  const auto store = JobStore::create(job_path("order"), make_job_info());
  const std::vector<int64_t> added = {9, 3, 7, 0, 12, 1, 100000000000};
  for (const int64_t i : added) store->add_result(make_row(i));
  std::vector<int64_t> seen;
  store->for_each_result([&](const RowResult& row) {
    EXPECT_EQ(row, make_row(row.row_index));
    seen.push_back(row.row_index);
  });
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 1, 3, 7, 9, 12, 100000000000}));
}

TEST(JobStore, CountsByStatus) {
  const auto store = JobStore::create(job_path("counts"), make_job_info());
  for (int64_t i = 0; i < 10; ++i) store->add_result(make_row(i));
  for (int64_t i = 10; i < 13; ++i) store->add_result(make_failed_row(i));
  store->add_result(make_skipped_row(13));
  store->set_total_rows(20);
  const JobCounts counts = store->counts();
  EXPECT_EQ(counts.done, 10);
  EXPECT_EQ(counts.failed, 3);
  EXPECT_EQ(counts.skipped, 1);
  EXPECT_EQ(counts.finished(), 14);
  EXPECT_EQ(counts.total_rows, 20);
}

TEST(JobStore, PendingRowIsRejected) {
  const auto store = JobStore::create(job_path("pending"), make_job_info());
  RowResult row = make_row(0);
  row.status = RowStatus::Pending;
  EXPECT_THROW(store->add_result(row), Error);
  EXPECT_FALSE(store->has_result(0));
}

// Another connection sees a row only once it is committed: at 64 queued rows, or after a second.
TEST(JobStore, CommitsEvery64RowsOrEverySecond) {
  const std::string path = job_path("batching");
  const auto writer = JobStore::create(path, make_job_info());
  const auto reader = JobStore::open(path);
  writer->add_result(make_row(0));
  writer->flush();  // starts the one-second window now
  const auto start = std::chrono::steady_clock::now();
  for (int64_t i = 1; i < 64; ++i) writer->add_result(make_row(i));
  if (std::chrono::steady_clock::now() - start < JobStore::kCommitInterval / 2) {
    EXPECT_EQ(reader->counts().done, 1) << "63 queued rows must wait for the 64th";
  }
  writer->add_result(make_row(64));
  EXPECT_EQ(reader->counts().done, 65);

  writer->add_result(make_row(65));
  std::this_thread::sleep_for(JobStore::kCommitInterval + std::chrono::milliseconds(50));
  writer->add_result(make_row(66));  // a second has passed: commits both
  EXPECT_EQ(reader->counts().done, 67);
}

TEST(JobStore, SnapshotKeepsReadsConsistentWhileAnotherConnectionWrites) {
  const std::string path = job_path("snapshot");
  const auto writer = JobStore::create(path, make_job_info());
  const auto reader = JobStore::open(path);
  writer->add_result(make_row(0));
  writer->flush();
  const auto num_rows = [&] {
    int64_t count = 0;
    reader->for_each_result([&](const RowResult&) { count++; });
    return count;
  };
  reader->with_snapshot([&] {
    EXPECT_EQ(num_rows(), 1);
    writer->add_result(make_row(1));
    writer->flush();
    EXPECT_EQ(num_rows(), 1) << "the snapshot must not see the later commit";
    EXPECT_EQ(reader->counts().done, 1);
  });
  EXPECT_EQ(num_rows(), 2);
}

TEST(JobStore, SeedAboveInt64MaxRoundTrips) {
  const std::string path = job_path("seed");
  RowResult row = make_row(0);
  row.seed = 0xffffffffffffffffULL;
  JobStore::create(path, make_job_info())->add_result(row);
  EXPECT_EQ(JobStore::open(path)->result(0)->seed, 0xffffffffffffffffULL);
}

TEST(JobStore, GarbageFileIsNotAJob) {
  const std::string path = job_path("garbage");
  std::string garbage(10000, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 251);
  test::write_file(path, garbage);
  const std::string message = error_of([&] { JobStore::open(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "not a Sluice job")) << message;
}

// A run killed before its job file's first commit (as older builds left it): an empty file, maybe
// with a journal. It is not "an SQLite database" to the user: it is a job that holds no rows.
TEST(JobStore, EmptyFileIsAnUninitialisedJobNotAnSqliteDatabase) {
  const std::string path = job_path("empty");
  test::write_file(path, "");
  test::write_file(path + "-journal", std::string(512, '\0'));
  const std::string message = error_of([&] { JobStore::open(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "an empty file")) << message;
  EXPECT_TRUE(contains(message, "holds no rows")) << message;
  EXPECT_FALSE(contains(message, "SQLite")) << message;
}

// The same run killed a little later: the file has SQLite's header (WAL switched on, maybe the
// application_id) but not a single table.
TEST(JobStore, TablelessDatabaseIsAnUninitialisedJob) {
  for (const int64_t application_id : {int64_t{0}, int64_t{0x536c4a62}}) {
    const std::string path = job_path("tableless");
    {
      SqliteDb db(path, SqliteDb::Mode::CreateNew);
      db.exec("PRAGMA journal_mode = WAL");
      db.exec(("PRAGMA application_id = " + std::to_string(application_id)).c_str());
    }
    const std::string message = error_of([&] { JobStore::open(path); });
    EXPECT_TRUE(contains(message, path)) << message;
    EXPECT_TRUE(contains(message, "holds no rows")) << message;
    EXPECT_TRUE(is_uninitialised_job_file(path));
  }
}

TEST(JobStore, OnlyFilesWithoutTablesAreUninitialised) {
  const std::string empty = job_path("empty");
  test::write_file(empty, "");
  EXPECT_TRUE(is_uninitialised_job_file(empty));
  const std::string job = job_path("job");
  JobStore::create(job, make_job_info());
  EXPECT_FALSE(is_uninitialised_job_file(job));
  const std::string other = job_path("other");
  {
    SqliteDb db(other, SqliteDb::Mode::CreateNew);
    db.exec("CREATE TABLE t (x)");
  }
  EXPECT_FALSE(is_uninitialised_job_file(other));
  const std::string text = job_path("text");
  test::write_file(text, "not a database at all, just some text that is long enough");
  EXPECT_FALSE(is_uninitialised_job_file(text));
  EXPECT_FALSE(is_uninitialised_job_file(job_path("missing")));
}

TEST(JobStore, CreateReplacesAnUninitialisedFileOnlyWhenAsked) {
  const std::string path = job_path("replace");
  test::write_file(path, "");
  // A stale log beside it must not be replayed into the new job.
  test::write_file(path + "-wal", std::string(4096, 'w'));
  EXPECT_TRUE(
      contains(error_of([&] { JobStore::create(path, make_job_info()); }), "already exists"));
  {
    const auto store =
        JobStore::create(path, make_job_info(), JobStore::IfExists::ReplaceUninitialised);
    store->add_result(make_row(0));
  }
  EXPECT_EQ(JobStore::open(path)->result(0), make_row(0));
  // A job with rows is never replaced.
  const std::string message = error_of(
      [&] { JobStore::create(path, make_job_info(), JobStore::IfExists::ReplaceUninitialised); });
  EXPECT_TRUE(contains(message, "already exists")) << message;
  EXPECT_EQ(JobStore::open(path)->result(0), make_row(0));
}

TEST(JobStore, OtherSqliteDatabaseIsNotAJob) {
  const std::string path = job_path("other-db");
  {
    SqliteDb db(path, SqliteDb::Mode::CreateNew);
    db.exec("CREATE TABLE rows (row_index INTEGER PRIMARY KEY, status TEXT)");
  }
  const std::string message = error_of([&] { JobStore::open(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "not a Sluice job")) << message;
}

TEST(JobStore, NewerSchemaVersionIsRefused) {
  const std::string path = job_path("newer");
  JobStore::create(path, make_job_info());
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    db.exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'");
  }
  const std::string message = error_of([&] { JobStore::open(path); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "schema version 99")) << message;
}

TEST(JobStore, BadStoredRowNamesFileRowAndColumn) {
  const std::string path = job_path("bad-row");
  {
    const auto store = JobStore::create(path, make_job_info());
    store->add_result(make_row(0));
    store->add_result(make_row(1));
  }
  {
    SqliteDb db(path, SqliteDb::Mode::OpenExisting);
    db.exec("UPDATE rows SET samples = '[{\"output\": 3}]' WHERE row_index = 1");
  }
  const auto store = JobStore::open(path);
  EXPECT_EQ(store->result(0), make_row(0));
  const std::string message = error_of([&] { store->result(1); });
  EXPECT_TRUE(contains(message, path)) << message;
  EXPECT_TRUE(contains(message, "row 1")) << message;
  EXPECT_TRUE(contains(message, "samples")) << message;
}

// Damages rows 1 and 3 of a five-row job the way a hand edit or a bad sector would.
std::string job_with_unreadable_rows(const std::string& name) {
  const std::string path = job_path(name);
  {
    const auto store = JobStore::create(path, make_job_info());
    for (int64_t i = 0; i < 5; ++i) store->add_result(make_row(i));
  }
  SqliteDb db(path, SqliteDb::Mode::OpenExisting);
  db.exec("UPDATE rows SET samples = '[{\"output\": ' WHERE row_index = 1");
  db.exec("UPDATE rows SET status = 'exploded' WHERE row_index = 3");
  return path;
}

TEST(JobStore, UnreadableRowsAreNotFinishedSoAResumeRunsThemAgain) {
  const auto store = JobStore::open(job_with_unreadable_rows("unreadable-resume"));
  EXPECT_EQ(store->finished_row_indices(), (std::vector<int64_t>{0, 2, 4}));
  std::vector<UnreadableRow> unreadable;
  store->finished_row_indices(&unreadable);
  ASSERT_EQ(unreadable.size(), 2u);
  EXPECT_EQ(unreadable[0].row_index, 1);
  EXPECT_TRUE(contains(unreadable[0].error, "row 1, column samples")) << unreadable[0].error;
  EXPECT_TRUE(contains(unreadable[0].error, store->path())) << unreadable[0].error;
  EXPECT_EQ(unreadable[1].row_index, 3);
  EXPECT_TRUE(contains(unreadable[1].error, "row 3, column status")) << unreadable[1].error;
  // The rerun row replaces the damaged one.
  store->add_result(make_row(1));
  EXPECT_EQ(store->result(1), make_row(1));
}

TEST(JobStore, ForEachResultHandsUnreadableRowsToTheirHandler) {
  const auto store = JobStore::open(job_with_unreadable_rows("unreadable-read"));
  std::vector<int64_t> read;
  std::vector<int64_t> unreadable;
  store->for_each_result([&](const RowResult& row) { read.push_back(row.row_index); },
                         [&](const UnreadableRow& row) { unreadable.push_back(row.row_index); });
  EXPECT_EQ(read, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(unreadable, (std::vector<int64_t>{1, 3}));
  // Without a handler a reader that must see every row still gets the error.
  EXPECT_TRUE(
      contains(error_of([&] { store->for_each_result([](const RowResult&) {}); }), "row 1"));
}

TEST(JobStore, CountsAnUnknownStatusAsUnreadable) {
  const auto store = JobStore::open(job_with_unreadable_rows("unreadable-counts"));
  const JobCounts counts = store->counts();
  EXPECT_EQ(counts.done, 4);  // row 1's status is fine; its samples show only when read
  EXPECT_EQ(counts.unreadable, 1);
  EXPECT_EQ(counts.finished(), 4);
}

// Overwrites part of a closed job file (checkpointed into the main file on close) and expects an
// Error, from open or from reading the rows, and no crash.
void expect_corruption_error(const std::string& path, size_t offset, size_t num_bytes) {
  {
    const auto store = JobStore::create(path, make_job_info());
    for (int64_t i = 0; i < 400; ++i) store->add_result(make_row(i));
  }
  std::string content = test::read_file(path);
  ASSERT_GT(content.size(), offset + num_bytes);
  for (size_t i = offset; i < offset + num_bytes; ++i) content[i] = static_cast<char>(0xa5);
  test::write_file(path, content);
  const std::string message = error_of([&] {
    const auto store = JobStore::open(path);
    store->for_each_result([](const RowResult&) {});
    store->counts();
  });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(JobStore, CorruptHeaderGivesAClearError) {
  expect_corruption_error(job_path("corrupt-header"), 0, 100);
}

TEST(JobStore, CorruptPagesGiveAClearError) {
  // Page 3 onwards (4096-byte pages): b-tree pages of the rows table.
  expect_corruption_error(job_path("corrupt-pages"), 3 * 4096, 4 * 4096);
}

TEST(JobStore, TruncatedFileGivesAClearError) {
  const std::string path = job_path("truncated");
  {
    const auto store = JobStore::create(path, make_job_info());
    for (int64_t i = 0; i < 400; ++i) store->add_result(make_row(i));
  }
  const std::string content = test::read_file(path);
  test::write_file(path, content.substr(0, content.size() / 2));
  const std::string message = error_of([&] {
    const auto store = JobStore::open(path);
    store->for_each_result([](const RowResult&) {});
  });
  EXPECT_TRUE(contains(message, path)) << message;
}

TEST(JobListing, ListsJobFilesWithCountsAndErrors) {
  const std::string dir = test::make_temp_dir("job-list");
  {
    const auto a = JobStore::create(dir + "/a.sluicejob", make_job_info());
    a->add_result(make_row(0));
    a->add_result(make_failed_row(1));
    a->set_total_rows(10);
    JobStore::create(dir + "/b.sluicejob", make_job_info(2));
  }
  test::write_file(dir + "/c.sluicejob", "this is not SQLite at all, not even close........");
  test::write_file(dir + "/notes.txt", "ignored");
  const std::vector<JobListing> jobs = list_jobs(dir);
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].path, dir + "/a.sluicejob");
  EXPECT_EQ(jobs[0].error, "");
  EXPECT_EQ(jobs[0].info.model_identity, "llama2c:stories15M");
  EXPECT_EQ(jobs[0].counts.done, 1);
  EXPECT_EQ(jobs[0].counts.failed, 1);
  EXPECT_EQ(jobs[0].counts.total_rows, 10);
  EXPECT_EQ(jobs[1].path, dir + "/b.sluicejob");
  EXPECT_EQ(jobs[1].info.params["n"], 2);
  EXPECT_EQ(jobs[1].counts.finished(), 0);
  EXPECT_EQ(jobs[2].path, dir + "/c.sluicejob");
  EXPECT_TRUE(contains(jobs[2].error, "not a Sluice job")) << jobs[2].error;
}

TEST(JobListing, MissingDirectoryNamesIt) {
  const std::string dir = test::make_temp_dir("job-list") + "/nope";
  const std::string message = error_of([&] { list_jobs(dir); });
  EXPECT_TRUE(contains(message, dir)) << message;
}

}  // namespace
}  // namespace sluice
