#include "engine/input/jsonl_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "engine/core/json_depth.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::read_all;
using test::shared_path;
using test::write_temp_file;

// The non-blank lines of a JSONL file, parsed independently of the reader, with their lines.
std::vector<std::pair<size_t, Json>> parse_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::pair<size_t, Json>> rows;
  std::string line;
  for (size_t line_number = 1; std::getline(in, line); ++line_number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    rows.emplace_back(line_number, Json::parse(line));
  }
  return rows;
}

void expect_same_rows_as_parsed(const std::string& relative, size_t expected_count) {
  const std::string path = shared_path(relative);
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::Jsonl) << relative;
  EXPECT_TRUE(outcome.row_errors.empty()) << relative << ": " << outcome.row_errors[0].what();
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  const auto expected = parse_lines(path);
  ASSERT_EQ(outcome.rows.size(), expected_count) << relative;
  ASSERT_EQ(expected.size(), expected_count) << relative;
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(outcome.rows[i].row_index, static_cast<int64_t>(i));
    EXPECT_EQ(outcome.rows[i].line, expected[i].first);
    EXPECT_EQ(outcome.rows[i].fields, expected[i].second) << relative << " row " << i;
    EXPECT_TRUE(outcome.rows[i].messages.empty());
  }
}

TEST(JsonlReader, SharedFilesMatchAnIndependentParse) {
  expect_same_rows_as_parsed("datasets/en/self_instruct_seed_tasks.jsonl", 175);
  expect_same_rows_as_parsed("datasets/en/user_oriented_instructions.jsonl", 252);
  expect_same_rows_as_parsed("datasets/ru/ru_alpaca_seed_tasks.jsonl", 137);
  expect_same_rows_as_parsed("datasets/ru/ru_gen100.jsonl", 103);
}

TEST(JsonlReader, KeepsKeyOrderAndKnownValues) {
  const auto outcome = read_all(shared_path("datasets/en/self_instruct_seed_tasks.jsonl"));
  ASSERT_EQ(outcome.rows.size(), 175u);
  const Json& last = outcome.rows.back().fields;
  EXPECT_EQ(last["id"], "seed_task_174");
  std::vector<std::string> keys;
  for (const auto& item : outcome.rows.front().fields.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"id", "name", "instruction", "instances",
                                            "is_classification"}));
}

TEST(JsonlReader, CyrillicTextIsIntact) {
  const auto outcome = read_all(shared_path("datasets/ru/ru_gen100.jsonl"));
  ASSERT_EQ(outcome.rows.size(), 103u);
  EXPECT_EQ(outcome.rows[0].fields["instruction"],
            "Предложи несколько рекомендаций для создания успешного бизнеса в 21 веке.");
  EXPECT_EQ(outcome.rows[102].fields["instruction"],
            "Выберите правильный вариант ответа на грамматический вопрос.");
}

TEST(JsonlReader, BlankLinesCrlfAndBom) {
  const std::string path =
      write_temp_file("rows.jsonl", "\xEF\xBB\xBF{\"a\": 1}\r\n\r\n   \n{\"a\": 2}\r\n{\"a\": 3}");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 3u);
  EXPECT_TRUE(outcome.row_errors.empty());
  EXPECT_EQ(outcome.rows[0].fields, Json::parse(R"({"a": 1})"));
  EXPECT_EQ(outcome.rows[1].line, 4u);
  EXPECT_EQ(outcome.rows[1].row_index, 1);
  EXPECT_EQ(outcome.rows[2].fields["a"], 3);
  EXPECT_EQ(outcome.rows[2].line, 5u);
}

TEST(JsonlReader, InvalidUtf8NamesTheLineAndTheNextRowIsRead) {
  const std::string path = write_temp_file(
      "rows.jsonl", "{\"a\": \"ok\"}\n{\"a\": \"bad \xC3\x28 byte\"}\n{\"a\": \"после\"}\n");
  const auto reader = open_dataset(path);
  EXPECT_EQ(reader->next()->fields["a"], "ok");
  try {
    reader->next();
    FAIL() << "expected a DatasetRowError";
  } catch (const DatasetRowError& e) {
    EXPECT_EQ(e.line, 2u);
    EXPECT_EQ(e.row_index, 1);
    EXPECT_NE(std::string(e.what()).find(path + ":2:12: invalid UTF-8 (byte 0xC3)"),
              std::string::npos)
        << e.what();
  }
  const auto after = reader->next();
  ASSERT_TRUE(after);
  EXPECT_EQ(after->fields["a"], "после");
  EXPECT_EQ(after->row_index, 2);  // the bad row keeps its index
  EXPECT_FALSE(reader->next());
}

TEST(JsonlReader, OverlongAndSurrogateEncodingsAreInvalid) {
  // C0 AF is an overlong '/', ED A0 80 an encoded surrogate, F4 90 past U+10FFFF.
  for (const std::string bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xE2\x82"}) {
    const auto outcome = read_all(write_temp_file("rows.jsonl", "{\"a\": \"" + bad + "\"}\n"));
    EXPECT_TRUE(outcome.rows.empty());
    ASSERT_EQ(outcome.row_errors.size(), 1u);
    EXPECT_NE(std::string(outcome.row_errors[0].what()).find("invalid UTF-8"), std::string::npos);
  }
}

TEST(JsonlReader, RowsThatAreNotObjectsOrNotJson) {
  const std::string path = write_temp_file(
      "rows.jsonl", "[1, 2]\n\"text\"\n{\"a\": tru}\n{\"a\": 1} {\"b\": 2}\n{\"ok\": true}\n");
  // (Detection would call this a JSON array, by its first byte; the format is given.)
  const auto outcome = read_all(path, DatasetFormat::Jsonl);
  ASSERT_EQ(outcome.rows.size(), 1u);
  EXPECT_EQ(outcome.rows[0].row_index, 4);
  EXPECT_EQ(outcome.rows[0].line, 5u);
  ASSERT_EQ(outcome.row_errors.size(), 4u);
  const auto message = [&](size_t i) { return std::string(outcome.row_errors[i].what()); };
  EXPECT_NE(message(0).find(path + ":1:1: expected a JSON object, got an array"), std::string::npos)
      << message(0);
  EXPECT_NE(message(1).find("got a string"), std::string::npos) << message(1);
  EXPECT_NE(message(2).find(path + ":3:"), std::string::npos) << message(2);
  EXPECT_NE(message(2).find("malformed JSON"), std::string::npos) << message(2);
  EXPECT_EQ(outcome.row_errors[3].line, 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(outcome.row_errors[i].row_index, int64_t(i));
}

TEST(JsonlReader, TenMegabyteLine) {
  const std::string big(10 * 1024 * 1024, 'x');
  const std::string path =
      write_temp_file("big.jsonl", "{\"a\": 1}\n{\"text\": \"" + big + "\"}\n{\"a\": 3}\n");
  const auto outcome = read_all(path);
  ASSERT_EQ(outcome.rows.size(), 3u);
  EXPECT_EQ(outcome.rows[1].fields["text"].get_ref<const std::string&>().size(), big.size());
  EXPECT_EQ(outcome.rows[2].line, 3u);
  std::filesystem::remove(path);  // 10 MB need not outlive the test
}

TEST(JsonlReader, RowNestedPastTheDepthLimitIsABadRowNamingItsLineAndColumn) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string deep_row = "{\"prompt\": \"x\", \"meta\": " + deep + "}";
  // The object is level 1, so kMaxJsonDepth - 1 arrays inside it are just within the limit.
  const size_t num_allowed = kMaxJsonDepth - 1;
  const std::string limit_row = "{\"prompt\": \"y\", \"meta\": " + std::string(num_allowed, '[') +
                                std::string(num_allowed, ']') + "}";
  const std::string path = write_temp_file(
      "deep.jsonl", "{\"prompt\": \"a\"}\n" + deep_row + "\n" + limit_row + "\n" + deep_row + "\n");
  const auto outcome = read_all(path, DatasetFormat::Jsonl);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].line, 3u);
  ASSERT_EQ(outcome.row_errors.size(), 2u);  // the last row too
  // The first bracket past the limit: the row's first '[' opens level 2.
  const size_t column = deep_row.find('[') + 1 + (kMaxJsonDepth - 1);
  for (size_t i = 0; i < 2; ++i) {
    const std::string message = outcome.row_errors[i].what();
    const size_t line = 2 + 2 * i;
    EXPECT_EQ(outcome.row_errors[i].line, line);
    EXPECT_NE(message.find(path + ":" + std::to_string(line) + ":" + std::to_string(column) + ": "),
              std::string::npos)
        << message.substr(0, 300);
    EXPECT_NE(message.find("nested deeper than 256"), std::string::npos) << message.substr(0, 300);
    EXPECT_LT(message.size(), 1000u);  // the row itself is not quoted
  }
}

TEST(JsonlReader, NumberOutOfRangeIsABadRowNamingItsLineAndColumn) {
  const std::string big_row = "{\"prompt\": \"b\", \"n\": 1e400}";
  const std::string path = write_temp_file(
      "big_number.jsonl", "{\"prompt\": \"a\"}\n" + big_row + "\n{\"prompt\": \"c\"}\n");
  const auto outcome = read_all(path, DatasetFormat::Jsonl);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].fields["prompt"], "c");
  ASSERT_EQ(outcome.row_errors.size(), 1u);
  EXPECT_EQ(outcome.row_errors[0].line, 2u);
  EXPECT_EQ(outcome.row_errors[0].row_index, 1);
  const std::string message = outcome.row_errors[0].what();
  const std::string column = std::to_string(big_row.find("1e400") + 1);
  EXPECT_NE(message.find(path + ":2:" + column + ": "), std::string::npos) << message;
  EXPECT_NE(message.find("1e400"), std::string::npos) << message;
  EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
}

}  // namespace
}  // namespace sluice
