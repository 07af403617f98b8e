// A thinking model's reasoning over the server's protocol (issue 31): the request's
// reasoning_effort and chat_template_kwargs, the reasoning on a whole answer's message (as
// reasoning_content and reasoning, only when there is one), the usage's reasoning tokens, and a
// streamed answer whose reasoning and content deltas, each concatenated, are the engine's split.
#include <httplib.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "app/server/api_error.h"
#include "app/server/completion_request.h"
#include "app/server/completion_response.h"
#include "app/server/request_group.h"
#include "app/server/response_budget.h"
#include "app/server/stream_response.h"
#include "app/server/whole_response.h"
#include "tests/unit/engine/engine_test_util.h"
#include "tests/unit/server/response_test_util.h"
#include "tests/unit/service/service_test_util.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

const ResponseHeader kReasoningChat{CompletionKind::Chat, "chatcmpl-9", 1700000000, "stories"};

CompletionRequest parse_reasoning_chat(const std::string& extra) {
  return parse_completion_request(
      parse_request_body(R"({"model": "m", "messages": [{"role": "user", "content": "hi"}])" +
                         extra + "}"),
      CompletionKind::Chat, {});
}

// Returns the ApiError parsing the chat body with extra throws (failing when none).
ApiError reasoning_error(const std::string& extra) {
  try {
    parse_reasoning_chat(extra);
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError for " << extra;
  return internal_error("none");
}

TEST(ReasoningRequest, ReadsTheEffortAndTheTemplateKwargs) {
  const CompletionRequest r = parse_reasoning_chat(
      R"(, "reasoning_effort": "high", "chat_template_kwargs": {"enable_thinking": false, "x": [1]})");
  EXPECT_EQ(r.reasoning_effort, "high");
  ASSERT_TRUE(r.thinking.has_value());
  EXPECT_FALSE(*r.thinking);
  EXPECT_EQ(r.template_kwargs.dump(), R"({"enable_thinking":false,"x":[1]})");
  const CompletionRequest plain = parse_reasoning_chat("");
  EXPECT_EQ(plain.reasoning_effort, "");
  EXPECT_FALSE(plain.thinking.has_value());
  EXPECT_TRUE(plain.template_kwargs.empty());
  // null means unset, as for every parameter.
  EXPECT_EQ(parse_reasoning_chat(R"(, "reasoning_effort": null)").reasoning_effort, "");
}

// A past assistant turn's reasoning, under the name its client writes, reaches the template.
TEST(ReasoningRequest, KeepsAPastTurnsReasoning) {
  for (const char* key : {"reasoning_content", "reasoning", "thinking"}) {
    const CompletionRequest r = parse_completion_request(
        parse_request_body(std::string(R"({"model": "m", "messages": [{"role": "user", )"
                                       R"("content": "hi"}, {"role": "assistant", "content": )"
                                       R"("Hello.", ")") +
                           key + R"(": "They greet me."}, {"role": "user", "content": "ok"}]})"),
        CompletionKind::Chat, {});
    ASSERT_EQ(r.messages.size(), 3u) << key;
    EXPECT_EQ(r.messages[1].reasoning, "They greet me.") << key;
    EXPECT_EQ(r.messages[1].content, "Hello.") << key;
  }
  try {
    parse_completion_request(
        parse_request_body(R"({"model": "m", "messages": [{"role": "assistant", "content": "a", )"
                           R"("reasoning_content": 1}, {"role": "user", "content": "ok"}]})"),
        CompletionKind::Chat, {});
    ADD_FAILURE() << "a number as reasoning was accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.param(), "messages[0].reasoning_content");
  }
}

TEST(ReasoningRequest, BadValuesAreA400NamingTheParameter) {
  for (const char* extra : {R"(, "reasoning_effort": "extreme")", R"(, "reasoning_effort": 3)",
                            R"(, "reasoning_effort": "")"}) {
    const ApiError e = reasoning_error(extra);
    EXPECT_EQ(e.status(), 400) << extra;
    EXPECT_EQ(e.param(), "reasoning_effort") << extra;
    EXPECT_THAT(e.what(), HasSubstr("low, medium or high")) << extra;
  }
  for (const char* extra :
       {R"(, "chat_template_kwargs": "enable_thinking")", R"(, "chat_template_kwargs": [1])"}) {
    const ApiError e = reasoning_error(extra);
    EXPECT_EQ(e.status(), 400) << extra;
    EXPECT_EQ(e.param(), "chat_template_kwargs") << extra;
    EXPECT_THAT(e.what(), HasSubstr("must be an object")) << extra;
  }
  EXPECT_EQ(reasoning_error(R"(, "chat_template_kwargs": {"enable_thinking": "yes"})").param(),
            "chat_template_kwargs.enable_thinking");
  // Both are chat parameters: a text completion refuses them as unknown.
  try {
    parse_completion_request(
        parse_request_body(R"({"model": "m", "prompt": "x", "reasoning_effort": "low"})"),
        CompletionKind::Text, {});
    ADD_FAILURE() << "a text completion took reasoning_effort";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "reasoning_effort");
  }
}

// The request's effort and thinking override the server's controls; the rest (budget, format)
// stay the server's; a structured output constrains the answer.
TEST(ReasoningRequest, ItsControlsGoOverTheServers) {
  const ReasoningControls server{
      .thinking = true, .effort = "low", .budget = 64, .format = ReasoningFormat::ThinkTags};
  const PromptRequestOptions same = prompt_request_options(parse_reasoning_chat(""), server);
  EXPECT_EQ(same.reasoning, server);
  EXPECT_FALSE(same.constrained_answer);
  const PromptRequestOptions own =
      prompt_request_options(parse_reasoning_chat(R"(, "reasoning_effort": "medium",
          "chat_template_kwargs": {"enable_thinking": false},
          "response_format": {"type": "json_object"})"),
                             server);
  EXPECT_EQ(own.reasoning.effort, "medium");
  EXPECT_EQ(own.reasoning.thinking, std::optional<bool>(false));
  EXPECT_EQ(own.reasoning.budget, 64);
  EXPECT_EQ(own.reasoning.format, std::optional<ReasoningFormat>(ReasoningFormat::ThinkTags));
  EXPECT_TRUE(own.constrained_answer);
  EXPECT_EQ(own.template_kwargs.dump(), R"({"enable_thinking":false})");
}

// Caught: reasoning keys on an answer without reasoning (answers of other models changed), a
// reasoning under one name only, reasoning tokens left out of the usage.
TEST(ReasoningResponse, TheMessageCarriesTheReasoningUnderBothNamesOnlyWhenThereIsOne) {
  Choice thought{0, "42", FinishReason::Stop, nullptr, "six times seven"};
  const Json with = completion_json(kReasoningChat, {thought}, {5, 9, 6});
  EXPECT_EQ(with["choices"][0]["message"], Json::parse(R"({"role": "assistant", "content": "42",
                "reasoning_content": "six times seven", "reasoning": "six times seven"})"));
  EXPECT_EQ(with["usage"], Json::parse(R"({"prompt_tokens": 5, "completion_tokens": 9,
      "total_tokens": 14, "completion_tokens_details": {"reasoning_tokens": 6}})"));
  const Json without = completion_json(kReasoningChat, {{0, "42", FinishReason::Stop}}, {5, 9});
  EXPECT_EQ(without["choices"][0]["message"],
            Json::parse(R"({"role": "assistant", "content": "42"})"));
  EXPECT_FALSE(without["usage"].contains("completion_tokens_details"));
  // The pieces of a large answer say the same.
  std::string joined;
  for (const auto& piece : completion_pieces(
           kReasoningChat, {dump_body(choice_json(CompletionKind::Chat, thought))}, {5, 9, 6}))
    joined += piece;
  EXPECT_EQ(Json::parse(joined), with);
}

TEST(ReasoningResponse, AReasoningChunkIsADeltaOfItsOwn) {
  const Json first = reasoning_chunk_json(kReasoningChat, 2, "hmm", true, false);
  EXPECT_EQ(first["choices"][0],
            Json::parse(R"({"index": 2, "delta": {"role": "assistant", "reasoning_content": "hmm",
                "reasoning": "hmm"}, "logprobs": null, "finish_reason": null})"));
  EXPECT_FALSE(first.contains("usage"));
  const Json later = reasoning_chunk_json(kReasoningChat, 2, " so", false, true);
  EXPECT_FALSE(later["choices"][0]["delta"].contains("role"));
  EXPECT_FALSE(later["choices"][0]["delta"].contains("content"));
  EXPECT_TRUE(later["usage"].is_null());
}

// WholeResponse takes the finished event's reasoning and reasoning tokens.
TEST(ReasoningResponse, AWholeAnswerTakesTheFinishedReasoning) {
  WholeResponse answer(kReasoningChat, 1, 1, false, nullptr);
  ChoiceEvent e{0, 0, {}};
  e.event.is_finished = true;
  e.event.finished.output_text = "Paris";
  e.event.finished.reasoning_text = "the capital";
  e.event.finished.num_reasoning_tokens = 3;
  e.event.finished.finish_reason = FinishReason::Stop;
  e.event.finished.num_prompt_tokens = 4;
  e.event.finished.output_token_ids.assign(7, 1);
  answer.add(e);
  httplib::Response res;
  answer.send(res, nullptr);
  const auto body = provide_all(res, 1 << 20);
  ASSERT_TRUE(body.has_value());
  const Json json = Json::parse(*body);
  EXPECT_EQ(json["choices"][0]["message"]["reasoning_content"], "the capital");
  EXPECT_EQ(json["choices"][0]["message"]["reasoning"], "the capital");
  EXPECT_EQ(json["choices"][0]["message"]["content"], "Paris");
  EXPECT_EQ(json["usage"]["completion_tokens_details"]["reasoning_tokens"], 3);
}

// A reasoning's tokens take one entry more each (its text is written twice).
TEST(ReasoningResponse, TheAnswerBudgetCountsTheReasoning) {
  const std::vector<size_t> prompt{10};
  SamplingParams s{.max_tokens = 100};
  EXPECT_EQ(count_response_entries(s, prompt, 4096), 100u);
  s.reasoning.format = ReasoningFormat::ThinkTags;
  EXPECT_EQ(count_response_entries(s, prompt, 4096), 200u);
}

// On the real engine: stories260K starting inside a <think> block (as a DeepSeek-R1 prompt leaves
// it) with a budget of 4 tokens, after which the engine closes the block and the answer follows.
// The stream's reasoning deltas, concatenated, are the finished reasoning, its content deltas the
// answer; no chunk is empty, and the usage counts the reasoning tokens. Caught: a reasoning token
// sent as an empty content chunk, reasoning in the content, a reasoning delta lost.
TEST(ReasoningStreamResponse, ReasoningAndContentDeltasConcatenateToTheSplit) {
  const auto service = make_stories260k_service();
  const std::vector<int32_t> prompt = stories260k_encode("Once upon a time");
  SamplingParams params{.temperature = 0.0f, .max_tokens = 24, .ignore_eos = true};
  params.reasoning = {
      .format = ReasoningFormat::ThinkTags, .starts_in_reasoning = true, .budget = 4};
  const StoriesModel model;
  auto engine = model.make_engine(EngineConfig{});
  engine->add_request(prompt, params, 0);
  std::optional<FinishedRequest> alone;
  while (engine->has_unfinished()) {
    StepResult step = engine->step();
    for (FinishedRequest& f : step.finished) alone = std::move(f);
  }
  ASSERT_TRUE(alone.has_value());
  ASSERT_FALSE(alone->reasoning_text.empty());
  ASSERT_FALSE(alone->output_text.empty()) << "the budget should have closed the reasoning";
  ASSERT_GT(alone->num_reasoning_tokens, 0);

  std::vector<ServiceRequest> requests;
  requests.push_back({prompt, params, 0, true});
  httplib::Response res;
  send_stream(res, std::make_unique<RequestGroup>(*service, std::move(requests)), kReasoningChat,
              StreamOptions{1, 1, /*include_usage=*/true, false, nullptr}, nullptr);
  const auto body = provide_all(res, 0);
  ASSERT_TRUE(body.has_value());
  const std::vector<std::string> events = sse_data(*body);
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.back(), "[DONE]");
  const Json usage = Json::parse(events[events.size() - 2])["usage"];
  EXPECT_EQ(usage["completion_tokens_details"]["reasoning_tokens"], alone->num_reasoning_tokens);
  std::string reasoning, reasoning_again, content;
  int num_reasoning_chunks = 0;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    const Json delta = Json::parse(events[i])["choices"][0]["delta"];
    const bool is_reasoning = delta.contains("reasoning_content");
    const bool is_content = delta.contains("content");
    EXPECT_FALSE(is_reasoning && is_content) << events[i];
    if (is_reasoning) {
      ++num_reasoning_chunks;
      EXPECT_NE(delta["reasoning_content"], "") << events[i];
      reasoning += delta["reasoning_content"].get<std::string>();
      reasoning_again += delta["reasoning"].get<std::string>();
      EXPECT_TRUE(content.empty()) << "reasoning after the answer began: " << events[i];
    }
    if (is_content) {
      EXPECT_NE(delta["content"], "") << events[i];
      content += delta["content"].get<std::string>();
    }
  }
  EXPECT_GT(num_reasoning_chunks, 0);
  EXPECT_EQ(reasoning, alone->reasoning_text);
  EXPECT_EQ(reasoning_again, alone->reasoning_text);
  EXPECT_EQ(content, alone->output_text);
}

}  // namespace
}  // namespace sluice::test
