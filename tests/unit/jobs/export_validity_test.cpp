// ExportOptions::leave_out_invalid: every format leaves out the rows judged invalid (some sample
// not valid), counts them as "invalid", and keeps rows without a verdict.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/export/exporters.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/export_job.h"

namespace sluice {
namespace {

SampleResult sample_judged(const std::string& output, std::optional<bool> valid) {
  SampleResult sample = test::make_sample(output, output.size());
  sample.valid = valid;
  return sample;
}

// Two samples a row (so DPO pairs them), outputs "row<i>-a" and "row<i>-bb": row 0 valid, row 1
// invalid in one sample, row 2 stored before validity was kept, row 3 failed, row 4 invalid.
std::vector<RowResult> rows_for_validity_export() {
  const std::vector<std::pair<std::optional<bool>, std::optional<bool>>> verdicts = {
      {true, true}, {true, false}, {std::nullopt, std::nullopt}, {}, {false, false}};
  std::vector<RowResult> rows;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const auto row_index = static_cast<int64_t>(i);
    if (i == 3) {
      rows.push_back(test::make_failed_row(row_index));
      continue;
    }
    RowResult row = test::make_row(row_index);
    const std::string marker = "row" + std::to_string(i) + "-";
    row.samples = {sample_judged(marker + "a", verdicts[i].first),
                   sample_judged(marker + "bb", verdicts[i].second)};
    rows.push_back(row);
  }
  return rows;
}

ExportOptions validity_export_options(bool leave_out_invalid) {
  ExportOptions options;
  options.leave_out_invalid = leave_out_invalid;
  options.batch_response_body = [](const RowResult& row, const std::string&, int64_t) {
    return nlohmann::json{{"text", row.samples.at(0).output}};
  };
  return options;
}

int64_t count_left_out_as(const ExportStats& stats, const std::string& reason) {
  for (const auto& [why, count] : stats.left_out)
    if (why == reason) return count;
  return 0;
}

TEST(ExportValidity, EveryFormatLeavesOutInvalidRows) {
  const test::ExportJob job = test::make_export_job("validity", rows_for_validity_export(), 2);
  const ExportFormat formats[] = {ExportFormat::Jsonl,      ExportFormat::Csv,
                                  ExportFormat::Alpaca,     ExportFormat::OpenAiChat,
                                  ExportFormat::ShareGpt,   ExportFormat::DpoPairs,
                                  ExportFormat::OpenAiBatch};
  for (const ExportFormat format : formats) {
    SCOPED_TRACE(to_string(format));
    const std::string path = job.dir + "/out-" + to_string(format);
    const ExportStats all = export_job(*job.store, format, path, validity_export_options(false));
    const std::string all_text = test::read_file(path);
    EXPECT_NE(all_text.find("row1-a"), std::string::npos);
    EXPECT_NE(all_text.find("row4-"), std::string::npos);
    EXPECT_EQ(count_left_out_as(all, "invalid"), 0);

    const ExportStats valid = export_job(*job.store, format, path, validity_export_options(true));
    const std::string valid_text = test::read_file(path);
    EXPECT_EQ(valid_text.find("row1-"), std::string::npos);
    EXPECT_EQ(valid_text.find("row4-"), std::string::npos);
    EXPECT_NE(valid_text.find("row0-"), std::string::npos);
    EXPECT_NE(valid_text.find("row2-"), std::string::npos);  // no verdict: kept
    EXPECT_EQ(count_left_out_as(valid, "invalid"), 2);
    EXPECT_EQ(valid.rows_written, all.rows_written - 2);
    EXPECT_NE(describe_left_out(valid).find("2 invalid"), std::string::npos)
        << describe_left_out(valid);
  }
}

}  // namespace
}  // namespace sluice
