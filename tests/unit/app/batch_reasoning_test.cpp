// The openai-batch body of a thinking model's row: reasoning_content and reasoning beside a chat
// message's content, reasoning first in a text completion's text, the reasoning tokens in usage;
// and a row without reasoning as before. Expected bodies are written out here by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "app/batch_response.h"
#include "engine/jobs/row_result.h"

namespace sluice {
namespace {

// A done batch row (input: the batch line) with one sample.
RowResult reasoning_batch_row(const char* input, std::string answer, std::string reasoning) {
  RowResult row;
  row.input = nlohmann::ordered_json::parse(input);
  row.prompt_tokens = 4;
  SampleResult sample;
  sample.output = std::move(answer);
  sample.output_tokens = 9;
  sample.reasoning = std::move(reasoning);
  sample.reasoning_tokens = sample.reasoning.empty() ? 0 : 6;
  sample.finish_reason = "stop";
  row.samples = {sample};
  return row;
}

const char* kReasoningChatLine =
    R"({"custom_id": "c", "url": "/v1/chat/completions", "body": {"model": "m"}})";
const char* kReasoningTextLine =
    R"({"custom_id": "t", "url": "/v1/completions", "body": {"model": "m"}})";

TEST(BatchReasoningBody, ChatMessageGetsBothReasoningNames) {
  const nlohmann::json body =
      batch_response_body(reasoning_batch_row(kReasoningChatLine, "5", "2 plus 3."), "r1", 100);
  const nlohmann::json expected = {{"id", "chatcmpl-r1"},
                                   {"object", "chat.completion"},
                                   {"created", 100},
                                   {"model", "m"},
                                   {"choices",
                                    {{{"index", 0},
                                      {"message",
                                       {{"role", "assistant"},
                                        {"content", "5"},
                                        {"reasoning_content", "2 plus 3."},
                                        {"reasoning", "2 plus 3."}}},
                                      {"logprobs", nullptr},
                                      {"finish_reason", "stop"}}}},
                                   {"usage",
                                    {{"prompt_tokens", 4},
                                     {"completion_tokens", 9},
                                     {"total_tokens", 13},
                                     {"completion_tokens_details", {{"reasoning_tokens", 6}}}}}};
  EXPECT_EQ(body, expected) << body.dump(2);
}

TEST(BatchReasoningBody, TextCompletionHasTheReasoningBeforeTheAnswer) {
  const nlohmann::json body =
      batch_response_body(reasoning_batch_row(kReasoningTextLine, "5", "2 plus 3."), "r2", 100);
  ASSERT_EQ(body["choices"].size(), 1u);
  EXPECT_EQ(body["choices"][0]["text"], "<think>\n2 plus 3.\n</think>\n\n5");
  EXPECT_EQ(body["usage"]["completion_tokens_details"], nlohmann::json({{"reasoning_tokens", 6}}));
}

TEST(BatchReasoningBody, RowWithoutReasoningIsAsBefore) {
  const nlohmann::json body =
      batch_response_body(reasoning_batch_row(kReasoningChatLine, "Hi.", ""), "r3", 100);
  const nlohmann::json expected = {
      {"id", "chatcmpl-r3"},
      {"object", "chat.completion"},
      {"created", 100},
      {"model", "m"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", "Hi."}}},
         {"logprobs", nullptr},
         {"finish_reason", "stop"}}}},
      {"usage", {{"prompt_tokens", 4}, {"completion_tokens", 9}, {"total_tokens", 13}}}};
  EXPECT_EQ(body, expected) << body.dump(2);
  const nlohmann::json text_body =
      batch_response_body(reasoning_batch_row(kReasoningTextLine, "Hi.", ""), "r4", 100);
  EXPECT_EQ(text_body["choices"][0]["text"], "Hi.");
  EXPECT_FALSE(text_body["usage"].contains("completion_tokens_details"));
}

}  // namespace
}  // namespace sluice
