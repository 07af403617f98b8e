#include "engine/input/dataset_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using test::shared_path;
using test::write_temp_file;
using ::testing::HasSubstr;

TEST(DatasetFormat, NamesRoundTrip) {
  for (const DatasetFormat format : {DatasetFormat::Auto, DatasetFormat::Jsonl, DatasetFormat::Json,
                                     DatasetFormat::Csv, DatasetFormat::Tsv, DatasetFormat::Text,
                                     DatasetFormat::ShareGpt, DatasetFormat::OpenAiChat}) {
    EXPECT_EQ(parse_dataset_format(to_string(format)), format) << to_string(format);
  }
  EXPECT_STREQ(to_string(DatasetFormat::OpenAiChat), "openai");
  EXPECT_EQ(parse_dataset_format("ShareGPT"), DatasetFormat::ShareGpt);
}

TEST(DatasetFormat, UnknownNameListsTheValidOnes) {
  try {
    parse_dataset_format("parquet");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("\"parquet\""), std::string::npos) << message;
    EXPECT_NE(message.find("auto, jsonl, json, csv, tsv, text, sharegpt, openai"),
              std::string::npos)
        << message;
  }
}

TEST(DatasetFormat, DetectsEverySharedDataset) {
  const std::pair<const char*, DatasetFormat> cases[] = {
      {"datasets/en/alpaca_5000.json", DatasetFormat::Json},
      {"datasets/en/self_instruct_seed_tasks.jsonl", DatasetFormat::Jsonl},
      {"datasets/en/user_oriented_instructions.jsonl", DatasetFormat::Jsonl},
      {"datasets/ru/ru_alpaca_seed_tasks.jsonl", DatasetFormat::Jsonl},
      {"datasets/ru/ru_gen100.jsonl", DatasetFormat::Jsonl},
      {"datasets/chat/sharegpt_dummy_conversation.json", DatasetFormat::ShareGpt},
      {"datasets/chat/openai_toy_chat_fine_tuning.jsonl", DatasetFormat::OpenAiChat},
  };
  for (const auto& [relative, expected] : cases) {
    EXPECT_EQ(detect_dataset_format(shared_path(relative)), expected) << relative;
  }
}

TEST(DatasetFormat, ChatShapesAreFoundInEitherContainer) {
  // ShareGPT as JSONL and OpenAI messages as a JSON array, with a misleading extension each.
  const std::string sharegpt_jsonl = write_temp_file(
      "chat.json",
      "{\"id\": \"a\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]}\n");
  EXPECT_EQ(detect_dataset_format(sharegpt_jsonl), DatasetFormat::ShareGpt);
  const std::string openai_array = write_temp_file(
      "chat.jsonl", "[\n  {\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n]\n");
  EXPECT_EQ(detect_dataset_format(openai_array), DatasetFormat::OpenAiChat);
}

TEST(DatasetFormat, ContentBeatsExtensionAndBomIsSkipped) {
  EXPECT_EQ(detect_dataset_format(write_temp_file("rows.txt", "\xEF\xBB\xBF  [{\"a\": 1}]")),
            DatasetFormat::Json);
  EXPECT_EQ(detect_dataset_format(write_temp_file("rows.csv", "\xEF\xBB\xBF{\"a\": 1}\n")),
            DatasetFormat::Jsonl);
  // The first row is bad; the second one still tells that this is OpenAI chat.
  EXPECT_EQ(
      detect_dataset_format(write_temp_file(
          "rows.jsonl", "{oops\n{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}]}\n")),
      DatasetFormat::OpenAiChat);
}

TEST(DatasetFormat, TablesByExtensionOrSniffing) {
  EXPECT_EQ(detect_dataset_format(write_temp_file("a.csv", "prompt\nhello\n")), DatasetFormat::Csv);
  EXPECT_EQ(detect_dataset_format(write_temp_file("a.TSV", "prompt\nhello\n")), DatasetFormat::Tsv);
  EXPECT_EQ(detect_dataset_format(write_temp_file("table", "id,prompt\n1,\"a, b\"\n2,c\n")),
            DatasetFormat::Csv);
  EXPECT_EQ(detect_dataset_format(write_temp_file("table", "id\tprompt\n1\ta, b\n2\tc\n")),
            DatasetFormat::Tsv);
}

TEST(DatasetFormat, ProseIsText) {
  // Commas in sentences must not make a text file look like CSV.
  EXPECT_EQ(
      detect_dataset_format(write_temp_file("prompts.txt", "Write a poem, please\nHello, world\n")),
      DatasetFormat::Text);
  EXPECT_EQ(detect_dataset_format(write_temp_file(
                "prompts", "Tell me a story about a cat.\nWhy is the sky blue, really?\n")),
            DatasetFormat::Text);
  EXPECT_EQ(detect_dataset_format(write_temp_file("one", "just one line")), DatasetFormat::Text);
}

TEST(DatasetFormat, TextThatOpensWithABracketIsStillText) {
  EXPECT_EQ(detect_dataset_format(
                write_temp_file("prompts.txt", "[Draft] write a poem\n{name} says hi\n")),
            DatasetFormat::Text);
  // Without a telling name, a file that opens like JSON is read as JSON, so that its reader
  // names the broken line rather than turning it into prompts.
  EXPECT_EQ(detect_dataset_format(write_temp_file("prompts", "[Draft] write a poem\n")),
            DatasetFormat::Json);
  // An unclosed '[' in a large text file is not scanned to the end (the sniffing limit).
  const std::string long_text = "[" + std::string(40 * 1024 * 1024, 'x') + "\n";
  const std::string long_path = write_temp_file("long.txt", long_text);
  EXPECT_EQ(detect_dataset_format(long_path), DatasetFormat::Text);
  std::filesystem::remove(long_path);  // 40 MB need not outlive the test
}

TEST(DatasetFormat, EmptyFileIsAnError) {
  for (const std::string content : {"", "\xEF\xBB\xBF", "  \n\r\n\t"}) {
    const std::string path = write_temp_file("empty.jsonl", content);
    try {
      detect_dataset_format(path);
      FAIL() << "expected an Error for content of " << content.size() << " bytes";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("empty"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(detect_dataset_format("/nonexistent/sluice/rows.jsonl"), Error);
}

TEST(DatasetFormat, ChatFormatIsDecidedByMostRowsNotByTheFirst) {
  const std::string openai_row = "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}\n";
  // The first message of the first row lacks "role": still an OpenAI file, with one bad row.
  const std::string openai = write_temp_file(
      "chat.jsonl", "{\"messages\": [{\"content\": \"no role\"}]}\n" + openai_row + openai_row);
  EXPECT_EQ(detect_dataset_format(openai), DatasetFormat::OpenAiChat);
  const auto openai_outcome = test::read_all(openai);
  EXPECT_EQ(openai_outcome.format, DatasetFormat::OpenAiChat);
  ASSERT_EQ(openai_outcome.rows.size(), 2u);
  EXPECT_EQ(openai_outcome.rows[0].messages.at(0).content, "hi");
  ASSERT_EQ(openai_outcome.row_errors.size(), 1u);
  EXPECT_THAT(openai_outcome.row_errors[0].what(),
              HasSubstr(openai + ":1:1: openai row: messages[0] has no string \"role\""));

  // ShareGPT in an array whose first element has a bad first turn: one bad row, not all.
  const std::string sharegpt_record =
      "{\"conversations\": [{\"from\": \"human\", \"value\": \"hello\"}]}";
  const std::string sharegpt =
      write_temp_file("chat.json", "[{\"conversations\": [\"hi\"]},\n" + sharegpt_record + ",\n" +
                                       sharegpt_record + "]");
  EXPECT_EQ(detect_dataset_format(sharegpt), DatasetFormat::ShareGpt);
  const auto sharegpt_outcome = test::read_all(sharegpt);
  ASSERT_EQ(sharegpt_outcome.rows.size(), 2u);
  ASSERT_EQ(sharegpt_outcome.row_errors.size(), 1u);
  EXPECT_THAT(sharegpt_outcome.row_errors[0].what(),
              HasSubstr(":1:2: element 1: sharegpt row: conversations[0] is not an object"));

  // A single row that tries to be chat is read as chat (a bad row), not as its JSON text.
  EXPECT_EQ(detect_dataset_format(write_temp_file(
                "one.jsonl", "{\"messages\": [{\"text\": \"hi\", \"from\": \"user\"}]}\n")),
            DatasetFormat::OpenAiChat);

  // Plain rows outvote one chat-looking row; it stays a plain row of the file.
  const std::string plain = write_temp_file(
      "plain.jsonl", "{\"prompt\": \"a\"}\n" + openai_row + "{\"prompt\": \"b\"}\n");
  EXPECT_EQ(detect_dataset_format(plain), DatasetFormat::Jsonl);
}

TEST(DatasetFormat, MostRowsWinEvenWhenTheFirstRowsAreTheOtherKind) {
  std::string content;
  for (int i = 0; i < 10; ++i) content += "{\"prompt\": \"plain\"}\n";
  for (int i = 0; i < 30; ++i) {
    content += "{\"conversations\": [{\"from\": \"human\", \"value\": \"x\"}]}\n";
  }
  EXPECT_EQ(detect_dataset_format(write_temp_file("mixed.jsonl", content)),
            DatasetFormat::ShareGpt);
}

TEST(DatasetFormat, BadValuesInTheFirstRowsDoNotStopDetection) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string path =
      write_temp_file("chat.jsonl",
                      "{\"messages\": [{\"role\": \"user\", \"content\": \"x\"}], \"n\": 1e400}\n"
                      "{\"messages\": " +
                          deep +
                          "}\n"
                          "{\"messages\": [{\"role\": \"user\", \"content\": \"y\"}]}\n");
  EXPECT_EQ(detect_dataset_format(path), DatasetFormat::OpenAiChat);
  const auto outcome = test::read_all(path);
  ASSERT_EQ(outcome.rows.size(), 1u);
  ASSERT_EQ(outcome.row_errors.size(), 2u);
  EXPECT_THAT(outcome.row_errors[0].what(), HasSubstr(path + ":1:"));
  EXPECT_THAT(outcome.row_errors[0].what(), HasSubstr("1e400"));
  EXPECT_THAT(outcome.row_errors[1].what(), HasSubstr(path + ":2:"));
  EXPECT_THAT(outcome.row_errors[1].what(), HasSubstr("nested deeper than 256"));
}

// OpenAI Batch input files: the lines carry custom_id, method, url and body.
TEST(DatasetFormat, BatchInputFilesAreFoundAndRead) {
  const std::string lines =
      R"({"custom_id": "a", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}})"
      "\n"
      R"({"custom_id": "b", "method": "POST", "url": "/v1/completions", "body": {"model": "m", "prompt": "once"}})"
      "\n";
  const std::string path = write_temp_file("batch.jsonl", lines);
  EXPECT_EQ(detect_dataset_format(path), DatasetFormat::OpenAiBatch);
  EXPECT_EQ(parse_dataset_format("openai-batch"), DatasetFormat::OpenAiBatch);
  EXPECT_STREQ(to_string(DatasetFormat::OpenAiBatch), "openai-batch");
  // A line holding "messages" in its body is still a batch line, not a chat record.
  const auto outcome = test::read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::OpenAiBatch);
  ASSERT_EQ(outcome.rows.size(), 2u);
  EXPECT_EQ(outcome.rows[1].fields["custom_id"], "b");
  EXPECT_EQ(outcome.rows[1].line, 2u);
  EXPECT_TRUE(outcome.rows[0].messages.empty());
  // Forced on a plain JSONL file, every line is read (the job names what each lacks).
  const std::string plain = write_temp_file("plain.jsonl", "{\"instruction\": \"x\"}\n");
  EXPECT_EQ(detect_dataset_format(plain), DatasetFormat::Jsonl);
  EXPECT_EQ(test::read_all(plain, DatasetFormat::OpenAiBatch).rows.size(), 1u);
}

}  // namespace
}  // namespace sluice
