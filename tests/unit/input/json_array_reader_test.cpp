#include "engine/input/json_array_reader.h"

#include <gtest/gtest.h>

#include "engine/core/json_depth.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::read_all;
using test::shared_path;
using test::write_temp_file;

TEST(JsonArrayReader, Alpaca5000MatchesAnIndependentParse) {
  const std::string path = shared_path("datasets/en/alpaca_5000.json");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::Json);
  EXPECT_TRUE(outcome.row_errors.empty());
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  // The test may hold the whole array; the reader must not need to.
  const Json expected = Json::parse(test::read_file(path));
  ASSERT_EQ(expected.size(), 5000u);
  ASSERT_EQ(outcome.rows.size(), 5000u);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_EQ(outcome.rows[i].fields, expected[i]) << "element " << i + 1;
    EXPECT_EQ(outcome.rows[i].row_index, static_cast<int64_t>(i));
    EXPECT_EQ(outcome.rows[i].line, i + 1);  // JSON arrays: element index + 1
  }
  EXPECT_EQ(outcome.rows[0].fields["instruction"],
            "Are the two sentences below grammatically correct? Output yes or no.");
  EXPECT_EQ(outcome.rows[0].fields["input"],
            "Sentence 1: I am going to the store.\nSentence 2: I goes to the store.");
  EXPECT_EQ(outcome.rows[1].fields["output"], "E, G, B");
  EXPECT_EQ(outcome.rows[4999].fields["instruction"],
            "What year did the Great Recession start in?");
  EXPECT_EQ(outcome.rows[4999].fields["input"], "");
}

TEST(JsonArrayReader, StreamsWithProgressRisingStepByStep) {
  // The 2 MB array is read in many small steps: after the first row only a buffer's worth of
  // the file has been consumed, and progress rises with the rows.
  const auto reader = open_dataset(shared_path("datasets/en/alpaca_5000.json"));
  ASSERT_TRUE(reader->next());
  EXPECT_LT(reader->progress(), 0.01);
  double last = reader->progress();
  int num_rises = 0;
  while (const auto row = reader->next()) {
    EXPECT_GE(reader->progress(), last);
    num_rises += reader->progress() > last;
    last = reader->progress();
  }
  EXPECT_EQ(num_rises, 4999);
  EXPECT_EQ(reader->progress(), 1.0);  // the closing ']' is consumed with the end
}

TEST(JsonArrayReader, PrettyPrintedScalarsAndNesting) {
  const std::string path = write_temp_file("rows.json", R"([
  {"a": "brackets ] } [ { and \"quotes\" and \\"},
  {"b": [1, {"c": [2, 3]}], "d": null}  ,
  {"e": "x"}
]
)");
  const auto outcome = read_all(path);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 3u);
  EXPECT_EQ(outcome.rows[0].fields["a"], "brackets ] } [ { and \"quotes\" and \\");
  EXPECT_EQ(outcome.rows[1].fields["b"][1]["c"][1], 3);
  EXPECT_EQ(outcome.rows[2].line, 3u);
}

TEST(JsonArrayReader, ElementsThatAreNotObjectsAreRowErrors) {
  const std::string path =
      write_temp_file("rows.json", "[1, \"two\", {\"a\": 3}, [4], {\"b\": tru}, {}]");
  const auto outcome = read_all(path);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[0].row_index, 2);
  EXPECT_EQ(outcome.rows[1].row_index, 5);
  ASSERT_EQ(outcome.row_errors.size(), 4u);
  EXPECT_EQ(outcome.row_errors[0].row_index, 0);
  EXPECT_EQ(outcome.row_errors[0].line, 1u);
  const std::string first = outcome.row_errors[0].what();
  EXPECT_NE(first.find(path + ":1:2: element 1: expected a JSON object, got a number"),
            std::string::npos)
      << first;
  const std::string malformed = outcome.row_errors[3].what();
  EXPECT_NE(malformed.find("element 5: malformed JSON"), std::string::npos) << malformed;
}

TEST(JsonArrayReader, TruncatedArrayKeepsEarlierRowsThenFails) {
  const std::string path = write_temp_file(
      "cut.json", "[\n{\"a\": 1},\n{\"a\": 2},\n{\"a\": \"the file was cut in the mid");
  const auto reader = open_dataset(path);
  EXPECT_EQ(reader->next()->fields["a"], 1);
  EXPECT_EQ(reader->next()->fields["a"], 2);
  for (int attempt = 0; attempt < 2; ++attempt) {  // the fatal error repeats
    try {
      reader->next();
      FAIL() << "expected an Error";
    } catch (const DatasetRowError& e) {
      FAIL() << "a truncated array is fatal, not a row error: " << e.what();
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(path + ":4:"), std::string::npos) << message;
      EXPECT_NE(message.find("element 3 (which starts at line 4, column 1)"), std::string::npos)
          << message;
      EXPECT_NE(message.find("truncated"), std::string::npos) << message;
    }
  }
}

TEST(JsonArrayReader, TruncatedBetweenElements) {
  const auto outcome = read_all(write_temp_file("cut.json", "[{\"a\": 1}, {\"a\": 2}"));
  EXPECT_EQ(outcome.rows.size(), 2u);
  ASSERT_TRUE(outcome.fatal_error);
  EXPECT_NE(outcome.fatal_error->find("expected ',' or ']' after element 2, found the end of the "
                                      "file (the array is truncated)"),
            std::string::npos)
      << *outcome.fatal_error;
}

TEST(JsonArrayReader, BrokenStructureIsFatal) {
  const std::pair<const char*, const char*> cases[] = {
      {"{\"a\": 1}", "expected a JSON array ('['), found '{' (is the file JSONL?)"},
      {"[{\"a\": 1} {\"a\": 2}]", ":1:11: expected ',' or ']' after element 1, found '{'"},
      {"[{\"a\": [1}]", ":1:10: mismatched '}' in element 1"},
      {"[{\"a\": 1},]", "expected element 2, found ']'"},
      {"[{\"a\": 1}] trailing", ":1:12: unexpected 't' after the array's closing ']'"},
  };
  for (const auto& [content, expected] : cases) {
    const auto outcome = read_all(write_temp_file("bad.json", content), DatasetFormat::Json);
    ASSERT_TRUE(outcome.fatal_error) << content;
    EXPECT_NE(outcome.fatal_error->find(expected), std::string::npos)
        << content << " -> " << *outcome.fatal_error;
  }
}

TEST(JsonArrayReader, EmptyArrayHasNoRows) {
  const auto outcome = read_all(write_temp_file("empty.json", "\xEF\xBB\xBF [ \n ] \n"));
  EXPECT_TRUE(outcome.rows.empty());
  EXPECT_FALSE(outcome.fatal_error);
}

TEST(JsonArrayReader, InvalidUtf8InsideAnElementNamesItsLine) {
  const std::string path =
      write_temp_file("bad.json", "[\n  {\"a\": 1},\n  {\"a\":\n   \"\xFF\"},\n  {\"a\": 3}\n]");
  const auto outcome = read_all(path);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].fields["a"], 3);
  ASSERT_EQ(outcome.row_errors.size(), 1u);
  const std::string message = outcome.row_errors[0].what();
  EXPECT_NE(message.find(path + ":4:5: element 2: invalid UTF-8 (byte 0xFF)"), std::string::npos)
      << message;
}

TEST(JsonArrayReader, DeepOrOutOfRangeElementsAreRowErrorsWithTheirLines) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string path = write_temp_file(
      "bad_values.json", "[\n{\"a\": 1},\n{\"a\": " + deep +
                             "},\n{\"n\": -1e400},\n{\"a\": 4},\n{\"a\": " + deep + "}\n]\n");
  const auto outcome = read_all(path);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].fields["a"], 4);
  ASSERT_EQ(outcome.row_errors.size(), 3u);  // the last element too
  const std::vector<std::string> expected = {
      // {"a": then level 2 opens at column 7, so level 257 at column 7 + 255.
      path + ":3:" + std::to_string(7 + kMaxJsonDepth - 1) + ": element 2: ",
      path + ":4:7: element 3: ",
      path + ":6:" + std::to_string(7 + kMaxJsonDepth - 1) + ": element 5: ",
  };
  const std::vector<std::string> reasons = {"nested deeper than 256", "-1e400",
                                            "nested deeper than 256"};
  for (size_t i = 0; i < expected.size(); ++i) {
    const std::string message = outcome.row_errors[i].what();
    EXPECT_NE(message.find(expected[i]), std::string::npos) << message.substr(0, 300);
    EXPECT_NE(message.find(reasons[i]), std::string::npos) << message.substr(0, 300);
  }
  EXPECT_EQ(outcome.row_errors[1].row_index, 2);
}

}  // namespace
}  // namespace sluice
