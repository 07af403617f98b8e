// The results table's Valid column in SQL: JobTable sorts and filters rows by the validity stored
// with each sample (row_validity over all samples), rows without a verdict included, and its SQL
// agrees with row_validity on every row.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/jobs/job_store.h"
#include "engine/jobs/job_table.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

SampleResult judged_sample(const std::string& output, std::optional<bool> valid) {
  SampleResult sample = test::make_sample(output, 4);
  sample.valid = valid;
  if (valid == false) sample.invalid_reason = "missing property 'a'";
  return sample;
}

RowResult row_with_samples(int64_t row_index, std::vector<SampleResult> samples) {
  RowResult row = test::make_row(row_index);
  row.samples = std::move(samples);
  return row;
}

// Rows 0..7 and their validity, written out: V valid, I invalid, U no verdict.
//   0 V  1 I  2 U (stored before validity was kept)  3 U (failed, no samples)
//   4 I (valid + invalid)  5 V (two valid)  6 U (valid + unjudged)
//   7 V (its output and extra spell "valid": false, which the walk must not read as the verdict)
std::string write_validity_job() {
  const std::string path = test::make_temp_dir("job-table-validity") + "/job.sluicejob";
  auto store = JobStore::create(path, test::make_job_info(2));
  store->add_result(row_with_samples(0, {judged_sample("{\"a\": 1}", true)}));
  store->add_result(row_with_samples(1, {judged_sample("{}", false)}));
  store->add_result(row_with_samples(2, {judged_sample("{\"a\": 2}", std::nullopt)}));
  store->add_result(test::make_failed_row(3));
  store->add_result(
      row_with_samples(4, {judged_sample("{\"a\": 3}", true), judged_sample("{", false)}));
  store->add_result(
      row_with_samples(5, {judged_sample("{\"a\": 4}", true), judged_sample("{\"a\": 5}", true)}));
  store->add_result(row_with_samples(
      6, {judged_sample("{\"a\": 6}", true), judged_sample("{\"a\": 7}", std::nullopt)}));
  SampleResult tricky = judged_sample("{\"valid\": false, \"a\": \"\\\"valid\\\": false\"}", true);
  tricky.extra = {{"check", {{"valid", false}}}};
  store->add_result(row_with_samples(7, {tricky}));
  store->flush();
  return path;
}

JobTableQuery validity_filter(std::optional<RowValidity> validity) {
  JobTableQuery query;
  query.validity = validity;
  return query;
}

TEST(RowValidity, AllSamplesDecide) {
  EXPECT_EQ(row_validity(row_with_samples(0, {judged_sample("x", true)})), RowValidity::Valid);
  EXPECT_EQ(
      row_validity(row_with_samples(0, {judged_sample("x", true), judged_sample("y", false)})),
      RowValidity::Invalid);
  EXPECT_EQ(row_validity(
                row_with_samples(0, {judged_sample("x", std::nullopt), judged_sample("y", false)})),
            RowValidity::Invalid);
  EXPECT_EQ(row_validity(
                row_with_samples(0, {judged_sample("x", true), judged_sample("y", std::nullopt)})),
            RowValidity::Unknown);
  EXPECT_EQ(row_validity(test::make_failed_row(0)), RowValidity::Unknown);
}

TEST(JobTableValidity, SortsInvalidThenValidThenUnknown) {
  const auto table = JobTable::open(write_validity_job());
  JobTableQuery query;
  query.sort_column = JobTableColumn::Valid;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{1, 4, 0, 5, 7, 2, 3, 6}));
  query.is_descending = true;
  EXPECT_EQ(table->row_indices(query), (std::vector<int64_t>{6, 3, 2, 7, 5, 0, 4, 1}));
}

TEST(JobTableValidity, FiltersCountEveryRowOnce) {
  const auto table = JobTable::open(write_validity_job());
  EXPECT_EQ(table->row_indices(validity_filter(RowValidity::Valid)),
            (std::vector<int64_t>{0, 5, 7}));
  EXPECT_EQ(table->row_indices(validity_filter(RowValidity::Invalid)),
            (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(table->row_indices(validity_filter(RowValidity::Unknown)),
            (std::vector<int64_t>{2, 3, 6}));
  EXPECT_EQ(table->count(validity_filter(RowValidity::Valid)), 3);
  EXPECT_EQ(table->count(validity_filter(RowValidity::Invalid)), 2);
  EXPECT_EQ(table->count(validity_filter(std::nullopt)), 8);  // legacy rows still show
  // With the status filter, and a page of the filtered view.
  JobTableQuery done_unknown = validity_filter(RowValidity::Unknown);
  done_unknown.status = RowStatus::Done;
  EXPECT_EQ(table->row_indices(done_unknown), (std::vector<int64_t>{2, 6}));
  const std::vector<RowSummary> page = table->rows(validity_filter(RowValidity::Invalid), 1, 10);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].row_index, 4);
}

TEST(JobTableValidity, SummariesAgreeWithRowValidity) {
  const auto table = JobTable::open(write_validity_job());
  const std::vector<RowValidity> expected = {
      RowValidity::Valid,   RowValidity::Invalid, RowValidity::Unknown, RowValidity::Unknown,
      RowValidity::Invalid, RowValidity::Valid,   RowValidity::Unknown, RowValidity::Valid};
  const std::vector<RowSummary> summaries = table->rows({}, 0, 100);
  ASSERT_EQ(summaries.size(), expected.size());
  for (size_t i = 0; i < summaries.size(); ++i) {
    EXPECT_EQ(summaries[i].validity, expected[i]) << "row " << i;
    const std::optional<RowResult> row = table->row(static_cast<int64_t>(i));
    ASSERT_TRUE(row.has_value());
    EXPECT_EQ(row_validity(*row), expected[i]) << "row " << i;
  }
}

}  // namespace
}  // namespace sluice
