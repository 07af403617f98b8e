#include "engine/input/text_reader.h"

#include <gtest/gtest.h>

#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using test::read_all;
using test::write_temp_file;

TEST(TextReader, OnePromptPerLine) {
  const std::string path =
      write_temp_file("prompts.txt", "\xEF\xBB\xBFWrite a haiku.\r\n\r\n  \nНапиши стих.\nlast");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::Text);
  ASSERT_EQ(outcome.rows.size(), 3u);
  EXPECT_EQ(outcome.rows[0].fields, nlohmann::ordered_json::parse(R"({"text": "Write a haiku."})"));
  EXPECT_EQ(outcome.rows[1].fields["text"], "Напиши стих.");
  EXPECT_EQ(outcome.rows[1].line, 4u);
  EXPECT_EQ(outcome.rows[1].row_index, 1);
  EXPECT_EQ(outcome.rows[2].fields["text"], "last");
}

TEST(TextReader, InvalidUtf8LineIsSkippable) {
  const std::string path = write_temp_file("prompts.txt", "one\ntw\x80o\nthree\n");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].row_index, 2);
  ASSERT_EQ(outcome.row_errors.size(), 1u);
  EXPECT_NE(
      std::string(outcome.row_errors[0].what()).find(path + ":2:3: invalid UTF-8 (byte 0x80)"),
      std::string::npos)
      << outcome.row_errors[0].what();
}

TEST(OpenDataset, EmptyAndMissingFilesAreErrors) {
  for (const DatasetFormat format :
       {DatasetFormat::Auto, DatasetFormat::Jsonl, DatasetFormat::Csv, DatasetFormat::Text}) {
    const std::string path = write_temp_file("empty.jsonl", "\n\n");
    try {
      open_dataset(path, format);
      FAIL() << "expected an Error for " << to_string(format);
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": the file is empty"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(open_dataset("/nonexistent/sluice/rows.jsonl"), Error);
  EXPECT_THROW(open_dataset(test::make_temp_dir("dir")), Error);
}

TEST(OpenDataset, ExplicitFormatOverridesDetection) {
  // A JSONL file read as text gives one row per line, JSON and all.
  const std::string path = write_temp_file("rows.jsonl", "{\"a\": 1}\n{\"a\": 2}\n");
  const auto outcome = read_all(path, DatasetFormat::Text);
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].fields["text"], "{\"a\": 2}");
  // The same file read as a JSON array is a clear fatal error.
  const auto as_array = read_all(path, DatasetFormat::Json);
  ASSERT_TRUE(as_array.fatal_error);
  EXPECT_NE(as_array.fatal_error->find("is the file JSONL?"), std::string::npos);
}

}  // namespace
}  // namespace sluice
