// ShareGPT and OpenAI chat files through open_dataset: counts, role normalisation, and the cut
// at the last non-assistant turn, checked against an independent parse of the same files.
#include <gtest/gtest.h>

#include <fstream>

#include "engine/input/chat_conversation.h"
#include "tests/unit/input/dataset_test_util.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::read_all;
using test::shared_path;
using test::write_temp_file;

TEST(ChatReader, ShareGptDummyConversations) {
  const std::string path = shared_path("datasets/chat/sharegpt_dummy_conversation.json");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::ShareGpt);
  ASSERT_FALSE(outcome.fatal_error) << *outcome.fatal_error;
  EXPECT_TRUE(outcome.row_errors.empty());
  const Json expected = Json::parse(test::read_file(path));
  ASSERT_EQ(expected.size(), 500u);
  ASSERT_EQ(outcome.rows.size(), 500u);
  for (size_t i = 0; i < expected.size(); ++i) {
    const DatasetRow& row = outcome.rows[i];
    EXPECT_EQ(row.fields, expected[i]);  // the whole record, reference answers included
    const Json& turns = expected[i]["conversations"];
    // Every conversation here alternates human/gpt and ends with gpt: drop that last answer.
    ASSERT_EQ(row.messages.size(), turns.size() - 1) << "row " << i;
    for (size_t t = 0; t < row.messages.size(); ++t) {
      EXPECT_EQ(row.messages[t].role, turns[t]["from"] == "human" ? "user" : "assistant");
      EXPECT_EQ(row.messages[t].content, turns[t]["value"]);
    }
    EXPECT_EQ(row.messages.back().role, "user");
  }
  // identity_2 has three exchanges; the model is asked for the third answer.
  const DatasetRow& multi = outcome.rows[2];
  EXPECT_EQ(multi.fields["id"], "identity_2");
  ASSERT_EQ(multi.messages.size(), 5u);
  EXPECT_EQ(multi.messages[0], (ChatMessage{"user", "What is up?"}));
  EXPECT_EQ(multi.messages[1], (ChatMessage{"assistant", "Hello! How can I help you today?"}));
  EXPECT_EQ(multi.messages[4], (ChatMessage{"user", "Goodbye"}));
}

TEST(ChatReader, OpenAiToyChat) {
  const std::string path = shared_path("datasets/chat/openai_toy_chat_fine_tuning.jsonl");
  const auto outcome = read_all(path);
  EXPECT_EQ(outcome.format, DatasetFormat::OpenAiChat);
  EXPECT_TRUE(outcome.row_errors.empty());
  ASSERT_EQ(outcome.rows.size(), 5u);
  const auto roles = [&](size_t i) {
    std::vector<std::string> out;
    for (const ChatMessage& m : outcome.rows[i].messages) out.push_back(m.role);
    return out;
  };
  using Roles = std::vector<std::string>;
  EXPECT_EQ(roles(0), (Roles{"system", "user"}));
  // Four exchanges: everything up to the fourth user turn.
  EXPECT_EQ(roles(1), (Roles{"system", "user", "assistant", "user", "assistant", "user",
                             "assistant", "user"}));
  EXPECT_EQ(outcome.rows[1].messages.back().content, "I don't even know how to play golf.");
  EXPECT_EQ(roles(2), (Roles{"user"}));
  EXPECT_EQ(roles(3), (Roles{"system"}));  // no user turn: the system prompt alone
  EXPECT_EQ(roles(4), (Roles{"system", "user"}));
  EXPECT_EQ(outcome.rows[4].messages[1].content, "I'm hungry.");
  // The 26 KB record keeps its long reference answer in fields.
  std::ifstream in(path, std::ios::binary);
  std::string line;
  for (int i = 0; i < 5; ++i) std::getline(in, line);
  EXPECT_GT(line.size(), 26000u);
  EXPECT_EQ(outcome.rows[4].fields, Json::parse(line));
  EXPECT_EQ(outcome.rows[4].line, 5u);
}

TEST(ChatReader, ShareGptJsonlAndOpenAiArray) {
  const auto sharegpt = read_all(write_temp_file(
      "sg.jsonl",
      R"({"id": 1, "system": "Be brief.", "conversations": [{"from": "human", "value": "Hi"}]})"
      "\n"
      R"({"id": 2, "conversations": [{"from": "system", "value": "S"}, {"from": "user", "value": "Q"}, {"from": "chatgpt", "value": "A"}]})"
      "\n"));
  EXPECT_EQ(sharegpt.format, DatasetFormat::ShareGpt);
  ASSERT_EQ(sharegpt.rows.size(), 2u);
  EXPECT_EQ(sharegpt.rows[0].messages, (Conversation{{"system", "Be brief."}, {"user", "Hi"}}));
  EXPECT_EQ(sharegpt.rows[1].messages, (Conversation{{"system", "S"}, {"user", "Q"}}));

  const auto openai = read_all(write_temp_file("oa.json", R"([
    {"messages": [{"role": "developer", "content": "D"},
                  {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}
  ])"));
  EXPECT_EQ(openai.format, DatasetFormat::OpenAiChat);
  ASSERT_EQ(openai.rows.size(), 1u);
  EXPECT_EQ(openai.rows[0].messages, (Conversation{{"system", "D"}, {"user", "ab"}}));
}

TEST(ChatReader, BadConversationsAreRowErrors) {
  const std::string path = write_temp_file("bad.jsonl",
                                           R"({"messages": [{"role": "user", "content": "ok"}]}
{"messages": [{"role": "tool", "content": "x"}]}
{"messages": []}
{"messages": [{"role": "assistant", "content": "only an answer"}]}
{"conversations": [{"from": "human", "value": "wrong format"}]}
{"messages": [{"role": "user", "content": 5}]}
)");
  const auto outcome = read_all(path, DatasetFormat::OpenAiChat);
  ASSERT_EQ(outcome.rows.size(), 1u);
  ASSERT_EQ(outcome.row_errors.size(), 5u);
  const std::vector<std::string> expected = {
      ":2:1: openai row: messages[0] has unsupported role \"tool\"",
      ":3:1: openai row: \"messages\" is empty",
      ":4:1: openai row: the conversation has no user or system turn to continue",
      ":5:1: openai row: missing \"messages\"",
      ":6:1: openai row: messages[0].content is not a string",
  };
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NE(std::string(outcome.row_errors[i].what()).find(path + expected[i]), std::string::npos)
        << outcome.row_errors[i].what();
    EXPECT_EQ(outcome.row_errors[i].line, i + 2);
  }
}

TEST(ChatReader, UnknownShareGptSpeaker) {
  const Json record = Json::parse(R"({"conversations": [{"from": "narrator", "value": "x"}]})");
  EXPECT_THROW(sharegpt_conversation(record), Error);
  EXPECT_EQ(detect_chat_format(record), DatasetFormat::ShareGpt);
  EXPECT_EQ(detect_chat_format(Json::parse(R"({"messages": "not turns"})")), DatasetFormat::Auto);
}

TEST(ChatReader, ARecordIsJudgedByItsTurnsArrayNotByItsFirstTurn) {
  // A malformed first turn still marks the record as the chat format it tries to be, so that
  // the reader reports the turn instead of the record passing as plain JSON.
  EXPECT_EQ(detect_chat_format(Json::parse(R"({"messages": [{"content": "no role"}]})")),
            DatasetFormat::OpenAiChat);
  EXPECT_EQ(detect_chat_format(Json::parse(R"({"messages": []})")), DatasetFormat::OpenAiChat);
  EXPECT_EQ(detect_chat_format(Json::parse(R"({"conversations": ["hi"]})")),
            DatasetFormat::ShareGpt);
  EXPECT_EQ(detect_chat_format(Json::parse(R"({"prompt": "x", "messages": "text"})")),
            DatasetFormat::Auto);
}

}  // namespace
}  // namespace sluice
