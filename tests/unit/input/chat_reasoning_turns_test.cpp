// A past assistant turn's reasoning in OpenAI messages (reasoning_content, as llama.cpp and
// DeepSeek write it; reasoning, vLLM's name; thinking, gpt-oss's) is kept with the turn, so the
// chat template can render it; a reasoning that is not a string names the message.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/input/chat_conversation.h"

namespace sluice {
namespace {

Conversation conversation_with(const char* key) {
  nlohmann::ordered_json record = {
      {"messages",
       {{{"role", "user"}, {"content", "Hi"}},
        {{"role", "assistant"}, {"content", "Hello."}, {key, "They greet me."}},
        {{"role", "user"}, {"content", "Thanks!"}}}}};
  return openai_conversation(record);
}

TEST(ChatReasoningTurns, EachNameIsKeptWithItsTurn) {
  for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
    SCOPED_TRACE(key);
    const Conversation c = conversation_with(key);
    ASSERT_EQ(c.size(), 3u);
    EXPECT_EQ(c[1].content, "Hello.");
    EXPECT_EQ(c[1].reasoning, "They greet me.");
    EXPECT_EQ(c[0].reasoning, "");
    EXPECT_EQ(c[2].reasoning, "");
  }
}

TEST(ChatReasoningTurns, AReasoningThatIsNotAStringNamesTheMessage) {
  nlohmann::ordered_json record = {
      {"messages",
       {{{"role", "user"}, {"content", "Hi"}},
        {{"role", "assistant"}, {"content", "Hello."}, {"reasoning_content", 5}},
        {{"role", "user"}, {"content", "Thanks!"}}}}};
  try {
    openai_conversation(record);
    FAIL() << "accepted a number as reasoning";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("messages[1].reasoning_content is not a string"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice
