#include "engine/input/dataset_row_count.h"

#include <gtest/gtest.h>

#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using test::shared_path;
using test::write_temp_file;

TEST(DatasetRowCount, CountsEveryRowOfTheSharedFiles) {
  EXPECT_EQ(count_dataset_rows(shared_path("datasets/en/alpaca_5000.json")), 5000);
  EXPECT_EQ(count_dataset_rows(shared_path("datasets/en/self_instruct_seed_tasks.jsonl")), 175);
}

TEST(DatasetRowCount, CountsMalformedRowsAndNotBlankLines) {
  // Three rows: the middle one is not JSON but still holds row index 1 in a job.
  const std::string path = write_temp_file(
      "rows.jsonl", "{\"instruction\": \"a\"}\n\nnot json\n{\"instruction\": \"b\"}\n\n");
  EXPECT_EQ(count_dataset_rows(path, DatasetFormat::Jsonl), 3);
}

TEST(DatasetRowCount, CountsCsvRecordsWithQuotedNewlines) {
  const std::string path =
      write_temp_file("rows.csv", "instruction,input\n\"two\nlines\",x\nplain,y\n");
  EXPECT_EQ(count_dataset_rows(path, DatasetFormat::Csv), 2);
}

TEST(DatasetRowCount, ReturnsMinusOneWhenCancelledOrUnreadable) {
  const std::atomic<bool> cancel{true};
  EXPECT_EQ(
      count_dataset_rows(shared_path("datasets/en/alpaca_5000.json"), DatasetFormat::Auto, &cancel),
      -1);
  const std::string broken = write_temp_file("broken.json", "[{\"instruction\": \"a\"}, {");
  EXPECT_EQ(count_dataset_rows(broken, DatasetFormat::Json), -1);
}

}  // namespace
}  // namespace sluice
