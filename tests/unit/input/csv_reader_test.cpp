#include "engine/input/csv_reader.h"

#include <gtest/gtest.h>

#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::read_all;
using test::write_temp_file;

TEST(CsvReader, QuotedFieldsWithNewlinesDelimitersAndQuotes) {
  const std::string path = write_temp_file("rows.csv",
                                           "instruction,input,output\n"
                                           "\"Say \"\"hi\"\"\",\"a, b\",plain\n"
                                           "\"two\nlines\",,\"\"\n"
                                           "last,x,y\n");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::Csv);
  EXPECT_TRUE(outcome.row_errors.empty());
  ASSERT_EQ(outcome.rows.size(), 3u);
  EXPECT_EQ(outcome.rows[0].fields,
            Json::parse(R"({"instruction": "Say \"hi\"", "input": "a, b", "output": "plain"})"));
  EXPECT_EQ(outcome.rows[0].line, 2u);
  EXPECT_EQ(outcome.rows[1].fields,
            Json::parse(R"({"instruction": "two\nlines", "input": "", "output": ""})"));
  EXPECT_EQ(outcome.rows[1].line, 3u);
  EXPECT_EQ(outcome.rows[2].line, 5u);  // the quoted newline took a line
  EXPECT_EQ(outcome.rows[2].row_index, 2);
}

TEST(CsvReader, CrlfBomAndEmptyTrailingLines) {
  const std::string path =
      write_temp_file("rows.csv", "\xEF\xBB\xBFprompt,id\r\n\"a\r\nb\",1\r\nc,2\r\n\r\n\r\n");
  const auto outcome = read_all(path);
  EXPECT_TRUE(outcome.row_errors.empty());
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[0].fields, Json::parse(R"({"prompt": "a\r\nb", "id": "1"})"));
  EXPECT_EQ(outcome.rows[1].fields, Json::parse(R"({"prompt": "c", "id": "2"})"));
}

TEST(CsvReader, NoTrailingNewline) {
  const auto outcome = read_all(write_temp_file("rows.csv", "a,b\n1,2"));
  ASSERT_EQ(outcome.rows.size(), 1u);
  EXPECT_EQ(outcome.rows[0].fields["b"], "2");
}

TEST(CsvReader, TsvKeepsCommasAndQuotesRules) {
  const std::string path = write_temp_file("rows.tsv",
                                           "question\tcontext\n"
                                           "Why, though?\t\"tab\there\"\n"
                                           "say \"x\"\tplain\n");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::Tsv);
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[0].fields,
            Json::parse(R"({"question": "Why, though?", "context": "tab\there"})"));
  // A quote inside an unquoted field is plain text.
  EXPECT_EQ(outcome.rows[1].fields["question"], "say \"x\"");
}

TEST(CsvReader, RaggedRowsAreRowErrorsNamingTheLine) {
  const std::string path =
      write_temp_file("rows.csv", "a,b,c\n1,2,3\n1,2\n1,2,3,4\n\"x\ny\",2,3\n");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].row_index, 3);
  EXPECT_EQ(outcome.rows[1].line, 5u);
  ASSERT_EQ(outcome.row_errors.size(), 2u);
  EXPECT_EQ(outcome.row_errors[0].line, 3u);
  EXPECT_EQ(outcome.row_errors[0].row_index, 1);
  EXPECT_NE(std::string(outcome.row_errors[0].what())
                .find(path + ":3:1: expected 3 columns (as in the header), found 2"),
            std::string::npos)
      << outcome.row_errors[0].what();
  EXPECT_NE(std::string(outcome.row_errors[1].what()).find(":4:1: expected 3 columns"),
            std::string::npos);
}

TEST(CsvReader, QuoteErrorsAreRowErrors) {
  const std::string path =
      write_temp_file("rows.csv", "a,b\n\"closed\"junk,2\nok,3\n\"never closed,4\nlost,5\n");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 1u);
  EXPECT_EQ(outcome.rows[0].fields["a"], "ok");
  ASSERT_EQ(outcome.row_errors.size(), 2u);
  EXPECT_NE(
      std::string(outcome.row_errors[0].what()).find(":2:9: unexpected text after a closing quote"),
      std::string::npos)
      << outcome.row_errors[0].what();
  EXPECT_NE(std::string(outcome.row_errors[1].what()).find(":4:1: unterminated quoted field"),
            std::string::npos)
      << outcome.row_errors[1].what();
  EXPECT_EQ(outcome.row_errors[1].line, 4u);
}

TEST(CsvReader, InvalidUtf8NamesLineAndColumn) {
  const std::string path = write_temp_file("rows.csv", "a,b\n\"multi\nli\xFE\",2\nok,3\n");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 1u);
  ASSERT_EQ(outcome.row_errors.size(), 1u);
  EXPECT_EQ(outcome.row_errors[0].line, 2u);  // where the record starts
  EXPECT_NE(
      std::string(outcome.row_errors[0].what()).find(path + ":3:3: invalid UTF-8 (byte 0xFE)"),
      std::string::npos)
      << outcome.row_errors[0].what();
}

TEST(CsvReader, HeaderProblemsAreFatal) {
  EXPECT_THROW(open_dataset(write_temp_file("dup.csv", "a,b,a\n1,2,3\n")), Error);
  try {
    open_dataset(write_temp_file("dup.csv", "a, b ,b\n1,2,3\n"));
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(":1: header row: column 3 repeats the name \"b\""),
              std::string::npos)
        << e.what();
  }
  // An empty header cell (pandas' index column) gets a name instead.
  const auto outcome = read_all(write_temp_file("index.csv", ",prompt\n0,hello\n"));
  ASSERT_EQ(outcome.rows.size(), 1u);
  EXPECT_EQ(outcome.rows[0].fields, Json::parse(R"({"column_1": "0", "prompt": "hello"})"));
}

TEST(CsvReader, HeaderOnlyHasNoRows) {
  const auto outcome = read_all(write_temp_file("header.csv", "a,b\n"));
  EXPECT_TRUE(outcome.rows.empty());
  EXPECT_TRUE(outcome.row_errors.empty());
}

}  // namespace
}  // namespace sluice
