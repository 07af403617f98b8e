// Comparing two jobs: the statistics of hand-built rows against values worked out by hand here,
// rows matched by index, and the refusal of jobs over different input files.
#include "engine/jobs/job_comparison.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

RowResult row_with(int64_t row_index, RowStatus status, std::vector<SampleResult> samples) {
  RowResult row;
  row.row_index = row_index;
  row.status = status;
  row.samples = std::move(samples);
  return row;
}

TEST(JobComparison, CountsStatusesLengthsAndFinishReasonsPerJob) {
  JobComparison comparison;
  const RowResult a0 = row_with(0, RowStatus::Done, {test::make_sample("one", 4)});
  const RowResult a1 = row_with(1, RowStatus::Done, {test::make_sample("two", 10, "length")});
  const RowResult a2 = row_with(2, RowStatus::Failed, {test::make_sample("", 0, "error")});
  const RowResult a3 = row_with(3, RowStatus::Done, {test::make_sample("three", 1)});
  const RowResult b0 = row_with(0, RowStatus::Done, {test::make_sample("one", 4)});
  const RowResult b1 = row_with(1, RowStatus::Done, {test::make_sample("deux", 6)});
  const RowResult b2 = row_with(2, RowStatus::Done, {test::make_sample("trois", 2, "length")});
  comparison.add(&a0, &b0);
  comparison.add(&a1, &b1);
  comparison.add(&a2, &b2);
  comparison.add(&a3, nullptr);
  const JobComparisonStats stats = comparison.stats();

  EXPECT_EQ(stats.a.num_rows, 4);
  EXPECT_EQ(stats.a.num_done, 3);
  EXPECT_EQ(stats.a.num_failed, 1);
  EXPECT_EQ(stats.a.num_measured_samples, 3);  // the failed row's sample is not a length
  EXPECT_FALSE(stats.a.is_length_in_chars);
  EXPECT_DOUBLE_EQ(stats.a.mean_output_length, 5.0);    // (4 + 10 + 1) / 3
  EXPECT_DOUBLE_EQ(stats.a.median_output_length, 4.0);  // of 1, 4, 10
  EXPECT_EQ(stats.a.finish_reason_counts,
            (std::map<std::string, int64_t>{{"error", 1}, {"length", 1}, {"stop", 2}}));

  EXPECT_EQ(stats.b.num_rows, 3);
  EXPECT_EQ(stats.b.num_done, 3);
  EXPECT_EQ(stats.b.num_failed, 0);
  EXPECT_DOUBLE_EQ(stats.b.mean_output_length, 4.0);    // (4 + 6 + 2) / 3
  EXPECT_DOUBLE_EQ(stats.b.median_output_length, 4.0);  // of 2, 4, 6
  EXPECT_EQ(stats.b.finish_reason_counts,
            (std::map<std::string, int64_t>{{"length", 1}, {"stop", 2}}));

  EXPECT_EQ(finish_reason_table(stats),
            (std::vector<FinishReasonCounts>{{"error", 1, 0}, {"length", 1, 1}, {"stop", 2, 2}}));

  EXPECT_EQ(stats.num_matched_rows, 3);
  EXPECT_EQ(stats.num_differing_rows, 2);  // rows 1 (output) and 2 (status and output)
  EXPECT_EQ(stats.num_only_in_a, 1);
  EXPECT_EQ(stats.num_only_in_b, 0);
}

TEST(JobComparison, MedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  JobComparison comparison;
  std::vector<RowResult> rows;
  for (const int tokens : {9, 2, 7, 3}) {
    rows.push_back(row_with(static_cast<int64_t>(rows.size()), RowStatus::Done,
                            {test::make_sample("x", tokens)}));
  }
  for (const RowResult& row : rows) comparison.add(&row, nullptr);
  EXPECT_DOUBLE_EQ(comparison.stats().a.median_output_length, 5.0);  // (3 + 7) / 2
  EXPECT_DOUBLE_EQ(comparison.stats().a.mean_output_length, 5.25);   // 21 / 4
}

TEST(JobComparison, LengthsAreCharactersWhenAJobHasNoTokenCounts) {
  JobComparison comparison;
  // "日本語" is three code points (nine bytes); "héllo" five code points.
  const RowResult a0 = row_with(0, RowStatus::Done, {test::make_sample("日本語", 0)});
  const RowResult a1 = row_with(1, RowStatus::Done, {test::make_sample("héllo", 7)});
  const RowResult b0 = row_with(0, RowStatus::Done, {test::make_sample("日本語", 2)});
  const RowResult b1 = row_with(1, RowStatus::Done, {test::make_sample("héllo", 4)});
  comparison.add(&a0, &b0);
  comparison.add(&a1, &b1);
  const JobComparisonStats stats = comparison.stats();
  EXPECT_TRUE(stats.a.is_length_in_chars);
  EXPECT_DOUBLE_EQ(stats.a.mean_output_length, 4.0);  // (3 + 5) / 2 characters
  EXPECT_FALSE(stats.b.is_length_in_chars);
  EXPECT_DOUBLE_EQ(stats.b.mean_output_length, 3.0);  // (2 + 4) / 2 tokens
  EXPECT_EQ(stats.num_differing_rows, 0);
}

TEST(JobComparison, RowsDifferByStatusSampleCountOrAnyOutput) {
  const RowResult base =
      row_with(0, RowStatus::Done, {test::make_sample("a", 1), test::make_sample("b", 1)});
  RowResult same = base;
  same.samples[1].output_tokens = 5;  // same text, other count: not a difference in output
  EXPECT_FALSE(rows_differ(base, same));
  RowResult second = base;
  second.samples[1].output = "c";
  EXPECT_TRUE(rows_differ(base, second));
  RowResult fewer = base;
  fewer.samples.pop_back();
  EXPECT_TRUE(rows_differ(base, fewer));
  RowResult failed = base;
  failed.status = RowStatus::Failed;
  EXPECT_TRUE(rows_differ(base, failed));
}

TEST(JobComparison, RefusesJobsOverDifferentInputsNamingBothFiles) {
  JobInfo a = test::make_job_info();
  JobInfo b = a;
  EXPECT_NO_THROW(check_same_source(a, "/jobs/a.sluicejob", b, "/jobs/b.sluicejob"));
  b.source_path = "/data/other.jsonl";
  b.source_sha256 = "0000000000000000000000000000000000000000000000000000000000000000";
  try {
    check_same_source(a, "/jobs/a.sluicejob", b, "/jobs/b.sluicejob");
    FAIL() << "jobs over different inputs were compared";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("/jobs/a.sluicejob"));
    EXPECT_THAT(e.what(), HasSubstr("/jobs/b.sluicejob"));
    EXPECT_THAT(e.what(), HasSubstr("/data/instructions.jsonl"));
    EXPECT_THAT(e.what(), HasSubstr("/data/other.jsonl"));
  }
  // Without digests, the paths decide.
  a.source_sha256.clear();
  b.source_sha256.clear();
  EXPECT_THROW(check_same_source(a, "/jobs/a.sluicejob", b, "/jobs/b.sluicejob"), Error);
  b.source_path = a.source_path;
  EXPECT_NO_THROW(check_same_source(a, "/jobs/a.sluicejob", b, "/jobs/b.sluicejob"));
}

// Writes a job of the given rows; returns its path.
std::string write_job(const std::string& dir, const std::string& name, const JobInfo& info,
                      const std::vector<RowResult>& rows) {
  const std::string path = dir + "/" + name + ".sluicejob";
  auto store = JobStore::create(path, info);
  for (const RowResult& row : rows) store->add_result(row);
  store->flush();
  return path;
}

TEST(JobComparison, CompareJobsMatchesStoredRowsByIndex) {
  const std::string dir = test::make_temp_dir("job-comparison");
  std::vector<RowResult> rows_a;
  std::vector<RowResult> rows_b;
  for (int64_t i = 0; i < 600; ++i) {  // more than one step of reading
    if (i != 7) rows_a.push_back(test::make_row(i));
    if (i != 9) rows_b.push_back(test::make_row(i));
  }
  rows_b[100].samples[0].output = "changed";  // row 101 (row 9 is missing from b)
  rows_b[3].status = RowStatus::Failed;
  const std::string path_a = write_job(dir, "a", test::make_job_info(), rows_a);
  const std::string path_b = write_job(dir, "b", test::make_job_info(), rows_b);
  const auto table_a = JobTable::open(path_a);
  const auto table_b = JobTable::open(path_b);

  std::vector<int64_t> progress;
  const JobComparisonResult result =
      compare_jobs(*table_a, *table_b, [&progress](int64_t read, int64_t total) {
        EXPECT_EQ(total, 600);
        progress.push_back(read);
        return true;
      });
  EXPECT_EQ(result.row_indices.size(), 600u);
  EXPECT_EQ(result.differing_row_indices, (std::vector<int64_t>{3, 101}));
  EXPECT_EQ(result.stats.num_matched_rows, 598);
  EXPECT_EQ(result.stats.num_differing_rows, 2);
  EXPECT_EQ(result.stats.num_only_in_a, 1);
  EXPECT_EQ(result.stats.num_only_in_b, 1);
  EXPECT_EQ(result.stats.a.num_done, 599);
  EXPECT_EQ(result.stats.b.num_failed, 1);
  EXPECT_EQ(result.stats.a.finish_reason_counts.at("stop"), 599);
  EXPECT_DOUBLE_EQ(result.stats.a.mean_output_length, 9.0);  // make_row's samples have 9 tokens
  EXPECT_EQ(progress.front(), 0);
  EXPECT_EQ(progress.back(), 600);

  EXPECT_THROW(compare_jobs(*table_a, *table_b, [](int64_t, int64_t) { return false; }), Cancelled);

  JobInfo other = test::make_job_info();
  other.source_sha256 = "1111111111111111111111111111111111111111111111111111111111111111";
  const auto table_c = JobTable::open(write_job(dir, "c", other, rows_b));
  EXPECT_THROW(compare_jobs(*table_a, *table_c), Error);
}

}  // namespace
}  // namespace sluice
