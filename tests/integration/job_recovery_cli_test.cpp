// Jobs that went wrong stay usable: a job file whose run was killed before its first commit is
// recognised and replaced, and one damaged row neither blocks export nor stays lost on resume.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/jobs/job_store.h"
#include "engine/jobs/sqlite_db.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string write_input(const std::string& dir) {
  write_file(dir + "/input.jsonl",
             "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The cat\"}\n"
             "{\"prompt\": \"A dog\"}\n{\"prompt\": \"Lily\"}\n");
  return dir + "/input.jsonl";
}

// What a run killed about 0.1 s after its start left with older builds: an empty job file and a
// journal. --resume says there is nothing to resume and how to start again; --job replaces it.
TEST(JobRecoveryCli, JobFileKilledBeforeItsFirstCommitIsReplacedNotStuck) {
  const std::string dir = make_temp_dir("recover-empty");
  const std::string input = write_input(dir);
  const std::string job = dir + "/run.sluicejob";
  write_file(job, "");
  write_file(job + "-journal", std::string(512, '\0'));

  const auto resumed = run_sluice({"generate", "--resume", job, "--output", dir + "/out.jsonl"});
  EXPECT_EQ(resumed.exit_code, 1);
  EXPECT_THAT(resumed.err, HasSubstr(job));
  EXPECT_THAT(resumed.err, HasSubstr("holds no rows"));
  EXPECT_THAT(resumed.err, HasSubstr("--job " + job));
  EXPECT_THAT(resumed.err, Not(HasSubstr("SQLite")));

  const auto fresh =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input, "--job", job,
                  "--output", dir + "/out.jsonl", "--max-tokens", "8"});
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_THAT(fresh.err, HasSubstr("replacing " + job));
  EXPECT_EQ(read_jsonl(dir + "/out.jsonl").size(), 4u);
  EXPECT_EQ(JobStore::open(job)->counts().done, 4);
}

// A job file with rows is never taken for an uninitialised one.
TEST(JobRecoveryCli, AJobWithRowsIsNeverReplaced) {
  const std::string dir = make_temp_dir("recover-keep");
  const std::string input = write_input(dir);
  const std::string job = dir + "/run.sluicejob";
  const std::vector<std::string> args = {
      "generate", "--model", shared_path(kGgufF32), "--input", input,
      "--job",    job,       "--max-tokens",        "8",       "--quiet"};
  ASSERT_EQ(run_sluice(args).exit_code, 0);
  const auto again = run_sluice(args);
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_THAT(again.err, HasSubstr("already exists"));
  EXPECT_EQ(JobStore::open(job)->counts().done, 4);
}

// Row 1's samples are damaged after the run. `jobs export` still writes rows 0, 2 and 3, names
// row 1 and exits 3; a resume runs row 1 again, and the output is whole.
TEST(JobRecoveryCli, OneDamagedRowNeitherBlocksExportNorStaysLost) {
  const std::string dir = make_temp_dir("recover-row");
  const std::string input = write_input(dir);
  const std::string job = dir + "/run.sluicejob";
  const auto first =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input, "--job", job,
                  "--output", dir + "/reference.jsonl", "--max-tokens", "8", "--quiet"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  {
    SqliteDb db(job, SqliteDb::Mode::OpenExisting);
    db.exec("UPDATE rows SET samples = '[{\"output\": \"cut' WHERE row_index = 1");
  }

  const auto exported =
      run_sluice({"jobs", "export", job, "--format", "jsonl", "--output", dir + "/export.jsonl"});
  EXPECT_EQ(exported.exit_code, 3) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("row 1 left out"));
  EXPECT_THAT(exported.err, HasSubstr("column samples"));
  EXPECT_THAT(exported.err, HasSubstr("1 row left out: 1 unreadable"));
  const auto records = read_jsonl(dir + "/export.jsonl");
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0]["row_index"], 0);
  EXPECT_EQ(records[1]["row_index"], 2);
  EXPECT_EQ(records[2]["row_index"], 3);

  const auto listed = run_sluice({"jobs", "show", job});
  EXPECT_EQ(listed.exit_code, 0) << listed.err;

  const auto resumed = run_sluice({"generate", "--resume", job, "--output", dir + "/out.jsonl"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_THAT(resumed.err, HasSubstr("row 1 does not read back; it runs again"));
  EXPECT_THAT(resumed.err, HasSubstr("done: 1 rows"));
  const auto expected = read_jsonl(dir + "/reference.jsonl");
  const auto actual = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(without_timings(actual[i]), without_timings(expected[i])) << i;
}

}  // namespace
}  // namespace sluice::test
