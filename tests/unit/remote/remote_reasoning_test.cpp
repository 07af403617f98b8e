// A thinking model behind a remote server (issue 31): the answer's reasoning comes back from
// message.reasoning_content (llama.cpp, DeepSeek, SGLang) or message.reasoning (vLLM), its tokens
// from usage.completion_tokens_details.reasoning_tokens; a chat request forwards the job's
// reasoning_effort and its thinking switch as chat_template_kwargs.enable_thinking.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/remote/remote_driver.h"
#include "app/remote/remote_protocol.h"
#include "engine/core/error.h"
#include "tests/support/fake_openai_server.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string chat_answer(const std::string& message_extra, const std::string& usage_extra = "") {
  return R"({"choices":[{"message":{"role":"assistant","content":"Blue.")" + message_extra +
         R"(},"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":9)" +
         usage_extra + "}}";
}

TEST(RemoteReasoning, TheAnswersReasoningComesUnderEitherName) {
  const FinishedRequest llama =
      parse_remote_response(chat_answer(R"(,"reasoning_content":"hmm")",
                                        R"(,"completion_tokens_details":{"reasoning_tokens":6})"),
                            true);
  EXPECT_EQ(llama.output_text, "Blue.");
  EXPECT_EQ(llama.reasoning_text, "hmm");
  EXPECT_EQ(llama.num_reasoning_tokens, 6);
  const FinishedRequest vllm = parse_remote_response(chat_answer(R"(,"reasoning":"well")"), true);
  EXPECT_EQ(vllm.reasoning_text, "well");
  EXPECT_EQ(vllm.num_reasoning_tokens, -1);  // no details: unknown, not zero
  // Both: reasoning_content wins; a null one counts as absent.
  EXPECT_EQ(parse_remote_response(chat_answer(R"(,"reasoning_content":"a","reasoning":"b")"), true)
                .reasoning_text,
            "a");
  EXPECT_EQ(parse_remote_response(chat_answer(R"(,"reasoning_content":null,"reasoning":"b")"), true)
                .reasoning_text,
            "b");
  const FinishedRequest none =
      parse_remote_response(chat_answer("", R"(,"completion_tokens_details":null)"), true);
  EXPECT_EQ(none.reasoning_text, "");
  EXPECT_EQ(none.num_reasoning_tokens, -1);
  // Malformed: named.
  try {
    parse_remote_response(chat_answer(R"(,"reasoning":7)"), true);
    ADD_FAILURE() << "a reasoning that is not text was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("message.reasoning is not text"));
  }
  try {
    parse_remote_response(
        chat_answer("", R"(,"completion_tokens_details":{"reasoning_tokens":-2})"), true);
    ADD_FAILURE() << "a negative reasoning count was taken";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("usage.completion_tokens_details.reasoning_tokens"));
  }
}

TEST(RemoteReasoning, AChatBodyForwardsTheControlsThatAreSet) {
  ServiceRequest chat;
  chat.is_chat = true;
  chat.messages = {{"user", "Name a colour."}};
  const Json plain = remote_request_body(chat, "m", 1);
  EXPECT_FALSE(plain.contains("reasoning_effort"));
  EXPECT_FALSE(plain.contains("chat_template_kwargs"));
  const Json effort = remote_request_body(chat, "m", 1, ReasoningControls{.effort = "low"});
  EXPECT_EQ(effort["reasoning_effort"], "low");
  EXPECT_FALSE(effort.contains("chat_template_kwargs"));
  const Json off = remote_request_body(chat, "m", 1, ReasoningControls{.thinking = false});
  EXPECT_EQ(off["chat_template_kwargs"], Json::parse(R"({"enable_thinking": false})"));
  EXPECT_FALSE(off.contains("reasoning_effort"));
  // A text completion has no template to tell: nothing is forwarded.
  ServiceRequest text;
  text.prompt_text = "Once";
  const Json completion =
      remote_request_body(text, "m", 1, ReasoningControls{.thinking = true, .effort = "high"});
  EXPECT_FALSE(completion.contains("reasoning_effort"));
  EXPECT_FALSE(completion.contains("chat_template_kwargs"));
}

FinishedRequest finish_one(RequestHandle& handle) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (auto event = handle.stream().pop(std::chrono::steady_clock::now() + 100ms);
        event && event->is_finished)
      return event->finished;
  }
  throw std::runtime_error("no answer within a minute");
}

// Through the driver: the job's controls reach the server, the reasoning comes back.
TEST(RemoteReasoning, TheDriverForwardsTheControlsAndKeepsTheReasoning) {
  for (const std::vector<std::string>& keys : std::vector<std::vector<std::string>>{
           {"reasoning_content"}, {"reasoning"}, {"reasoning_content", "reasoning"}}) {
    FakeOpenAiServer fake;
    fake.set_reasoning_keys(keys);
    RemoteSpec spec;
    spec.endpoints = {fake.url()};
    spec.retries = 0;
    spec.reasoning = ReasoningControls{.thinking = true, .effort = "medium"};
    RemoteDriver driver(spec);
    ServiceRequest request;
    request.is_chat = true;
    request.messages = {{"user", "why?"}};
    auto handle = driver.submit(request);
    const FinishedRequest f = finish_one(*handle);
    EXPECT_EQ(f.output_text, FakeOpenAiServer::answer_to("why?")) << keys.front();
    EXPECT_EQ(f.reasoning_text, FakeOpenAiServer::reasoning_about("why?")) << keys.front();
    EXPECT_EQ(f.num_reasoning_tokens, 2);
    bool has_seen = false;
    for (const auto& seen : fake.seen()) {
      if (seen.path != "/v1/chat/completions") continue;
      has_seen = true;
      EXPECT_EQ(seen.body["reasoning_effort"], "medium");
      EXPECT_EQ(seen.body["chat_template_kwargs"], Json::parse(R"({"enable_thinking": true})"));
    }
    EXPECT_TRUE(has_seen);
  }
}

}  // namespace
}  // namespace sluice::test
