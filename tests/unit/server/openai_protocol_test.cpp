// The OpenAI protocol as pure functions: request bodies checked into engine requests (every
// bad value a 400 naming its parameter), and the response, chunk, usage, error and metrics
// texts built from values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "app/server/api_error.h"
#include "app/server/completion_request.h"
#include "app/server/completion_response.h"
#include "app/server/prometheus_metrics.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

CompletionRequest parse_text(const std::string& body, const SamplingParams& defaults = {}) {
  return parse_completion_request(parse_request_body(body), CompletionKind::Text, defaults);
}

CompletionRequest parse_chat(const std::string& body) {
  return parse_completion_request(parse_request_body(body), CompletionKind::Chat, {});
}

// Returns the ApiError that f throws (failing the test when it throws none).
template <typename F>
ApiError error_of(F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    return e;
  }
  ADD_FAILURE() << "no ApiError";
  return internal_error("none");
}

TEST(CompletionRequest, ReadsEverySamplingParameter) {
  const CompletionRequest r = parse_text(R"({"model": "m", "prompt": "Once", "n": 3, "seed": 42,
      "temperature": 0.7, "top_p": 0.9, "top_k": 40, "min_p": 0.05, "max_tokens": 17,
      "stop": ["\n", "END"], "presence_penalty": 0.5, "frequency_penalty": -0.5,
      "repetition_penalty": 1.1, "ignore_eos": true, "stream": true,
      "stream_options": {"include_usage": true}, "user": "u", "logprobs": null})");
  EXPECT_EQ(r.model, "m");
  ASSERT_EQ(r.prompts.size(), 1u);
  EXPECT_EQ(r.prompts[0].text, "Once");
  EXPECT_EQ(r.sampling.n, 3);
  EXPECT_TRUE(r.has_seed);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.7f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 40);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.05f);
  EXPECT_EQ(r.sampling.max_tokens, 17);
  EXPECT_EQ(r.sampling.stop, (std::vector<std::string>{"\n", "END"}));
  EXPECT_FLOAT_EQ(r.sampling.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(r.sampling.repetition_penalty, 1.1f);
  EXPECT_TRUE(r.sampling.ignore_eos);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
}

TEST(CompletionRequest, LeftOutParametersTakeTheServersDefaults) {
  const CompletionRequest r = parse_text(R"({"model": "m", "prompt": "x"})",
                                         SamplingParams{.temperature = 0.3f, .max_tokens = 99});
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.3f);
  EXPECT_EQ(r.sampling.max_tokens, 99);
  EXPECT_FALSE(r.has_seed);
  EXPECT_FALSE(r.stream);
}

TEST(CompletionRequest, PromptsMayBeTextsOrTokenIds) {
  EXPECT_EQ(parse_text(R"({"model": "m", "prompt": ["a", "b"]})").prompts.size(), 2u);
  const auto tokens = parse_text(R"({"model": "m", "prompt": [1, 5, 9]})").prompts;
  ASSERT_EQ(tokens.size(), 1u);
  EXPECT_TRUE(tokens[0].is_tokens);
  EXPECT_EQ(tokens[0].token_ids, (std::vector<int32_t>{1, 5, 9}));
  EXPECT_EQ(parse_text(R"({"model": "m", "prompt": [[1, 2], [3]]})").prompts.size(), 2u);
}

TEST(CompletionRequest, ChatTakesMessagesAndMaxCompletionTokens) {
  const CompletionRequest r = parse_chat(R"({"model": "m", "max_completion_tokens": 5, "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Hi "}, {"type": "text", "text": "there"}]}]})");
  EXPECT_EQ(r.sampling.max_tokens, 5);
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[0], (ChatMessage{"system", "Be brief."}));
  EXPECT_EQ(r.messages[1], (ChatMessage{"user", "Hi there"}));
}

struct BadCase {
  const char* body;
  const char* param;    // the parameter the error names ("" for the body)
  const char* message;  // a part of the message
};

class BadTextRequest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadTextRequest, IsA400NamingTheParameter) {
  const ApiError e = error_of([&] { parse_text(GetParam().body); });
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.param(), GetParam().param) << e.what();
  EXPECT_THAT(e.what(), HasSubstr(GetParam().message));
  const Json body = error_json(e);
  EXPECT_EQ(body["error"]["type"], "invalid_request_error");
  EXPECT_EQ(body["error"]["message"], e.what());
}

INSTANTIATE_TEST_SUITE_P(
    Corpus, BadTextRequest,
    ::testing::Values(
        BadCase{R"({"model": "m", "prompt": "x",)", "", "not valid JSON at line 1"},
        BadCase{"[1, 2]", "", "must be a JSON object"},
        BadCase{"{\"model\": \"m\", \"prompt\": \"\xC3\x28\"}", "", "not UTF-8"},
        BadCase{R"({"prompt": "x"})", "model", "'model' must be a string"},
        BadCase{R"({"model": "m"})", "prompt", "'prompt' is required"},
        BadCase{R"({"model": "m", "prompt": []})", "prompt", "an empty array"},
        BadCase{R"({"model": "m", "prompt": {"a": 1}})", "prompt", "not an object"},
        BadCase{R"({"model": "m", "prompt": [-1]})", "prompt", "non-negative"},
        BadCase{R"({"model": "m", "prompt": "x", "n": 0})", "n", "between 1 and 128"},
        BadCase{R"({"model": "m", "prompt": "x", "n": 1.5})", "n", "must be an integer"},
        BadCase{R"({"model": "m", "prompt": "x", "max_tokens": -3})", "max_tokens", "between 1"},
        BadCase{R"({"model": "m", "prompt": "x", "max_tokens": "5"})", "max_tokens",
                "not a string"},
        BadCase{R"({"model": "m", "prompt": "x", "temperature": 3})", "temperature",
                "between 0 and 2"},
        BadCase{R"({"model": "m", "prompt": "x", "top_p": 0})", "top_p", "greater than 0"},
        BadCase{R"({"model": "m", "prompt": "x", "top_k": -2})", "top_k", "between -1"},
        BadCase{R"({"model": "m", "prompt": "x", "min_p": 1.5})", "min_p", "between 0 and 1"},
        BadCase{R"({"model": "m", "prompt": "x", "presence_penalty": 9})", "presence_penalty",
                "between -2 and 2"},
        BadCase{R"({"model": "m", "prompt": "x", "repetition_penalty": 0})", "repetition_penalty",
                "greater than 0"},
        BadCase{R"({"model": "m", "prompt": "x", "stop": 5})", "stop", "string or an array"},
        BadCase{R"({"model": "m", "prompt": "x", "stop": [""]})", "stop", "must not be empty"},
        BadCase{R"({"model": "m", "prompt": "x", "seed": "s"})", "seed", "must be an integer"},
        BadCase{R"({"model": "m", "prompt": "x", "stream": 1})", "stream", "must be a boolean"},
        BadCase{R"({"model": "m", "prompt": "x", "stream_options": {"x": 1}})", "stream_options",
                "unknown"},
        BadCase{R"({"model": "m", "prompt": "x", "temprature": 1})", "temprature",
                "unknown parameter"},
        BadCase{R"({"model": "m", "prompt": "x", "messages": []})", "messages",
                "unknown parameter"},
        BadCase{R"({"model": "m", "prompt": "x", "logprobs": 21})", "logprobs", "between 0 and 20"},
        BadCase{R"({"model": "m", "prompt": "x", "logprobs": true})", "logprobs",
                "must be an integer"},
        BadCase{R"({"model": "m", "prompt": "x", "top_logprobs": 2})", "top_logprobs",
                "chat parameter"},
        BadCase{R"({"model": "m", "prompt": "x", "echo": true})", "echo", "not supported"},
        BadCase{R"({"model": "m", "prompt": ["a", "b"], "n": 1000})", "n", "between 1 and 128"}));

// response_format (OpenAI) and structured_outputs (vLLM) become a grammar source; the server
// compiles it (GrammarCache), so a bad schema is its 400, naming the same parameter.
TEST(CompletionRequest, ResponseFormatAndStructuredOutputsBecomeAGrammarSource) {
  const CompletionRequest text = parse_chat(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "text"}})");
  EXPECT_FALSE(text.grammar);
  const CompletionRequest object = parse_chat(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "json_object"}})");
  ASSERT_TRUE(object.grammar);
  EXPECT_EQ(object.grammar->kind, GrammarSourceKind::JsonObject);
  EXPECT_EQ(object.grammar_param, "response_format");
  const CompletionRequest schema = parse_chat(
      R"({"model": "m", "messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "json_schema", "json_schema": {"name": "qa", "strict": true,
          "schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}}})");
  ASSERT_TRUE(schema.grammar);
  EXPECT_EQ(schema.grammar->kind, GrammarSourceKind::JsonSchema);
  EXPECT_EQ(Json::parse(schema.grammar->text),
            Json::parse(R"({"type": "object", "properties": {"a": {"type": "integer"}}})"));
  const CompletionRequest choice = parse_text(
      R"({"model": "m", "prompt": "x", "structured_outputs": {"choice": ["yes", "no"]}})");
  ASSERT_TRUE(choice.grammar);
  EXPECT_EQ(choice.grammar->kind, GrammarSourceKind::Choice);
  EXPECT_EQ(choice.grammar->choices, (std::vector<std::string>{"yes", "no"}));
  EXPECT_EQ(choice.grammar_param, "structured_outputs");
  const CompletionRequest regex =
      parse_text(R"({"model": "m", "prompt": "x", "structured_outputs": {"regex": "[0-9]+"}})");
  ASSERT_TRUE(regex.grammar);
  EXPECT_EQ(regex.grammar->kind, GrammarSourceKind::Regex);
  EXPECT_EQ(regex.grammar->text, "[0-9]+");
  const CompletionRequest gbnf = parse_text(
      R"({"model": "m", "prompt": "x", "structured_outputs": {"grammar": "root ::= \"a\""}})");
  ASSERT_TRUE(gbnf.grammar);
  EXPECT_EQ(gbnf.grammar->kind, GrammarSourceKind::Gbnf);
}

TEST(CompletionRequest, BadStructuresAreA400NamingTheParameter) {
  const std::string chat = R"({"model": "m", "messages": [{"role": "user", "content": "x"}], )";
  const std::pair<std::string, std::string> cases[] = {
      {chat + R"("response_format": "json"})", "response_format"},
      {chat + R"("response_format": {"type": "yaml"}})", "response_format.type"},
      {chat + R"("response_format": {"type": "json_schema"}})", "response_format.json_schema"},
      {chat + R"("response_format": {"type": "json_schema", "json_schema": {"schema": 3}}})",
       "response_format.json_schema"},
      {chat + R"("structured_outputs": {"regex": 5}})", "structured_outputs.regex"},
      {chat + R"("structured_outputs": {"choice": []}})", "structured_outputs.choice"},
      {chat + R"("structured_outputs": {"choice": ["a", 1]}})", "structured_outputs.choice"},
      {chat + R"("structured_outputs": {"xml": "a"}})", "structured_outputs.xml"},
      {chat + R"("structured_outputs": {"regex": "a", "choice": ["a"]}})", "structured_outputs"},
      {chat + R"("response_format": {"type": "json_object"},
                 "structured_outputs": {"regex": "a"}})",
       "structured_outputs"},
  };
  for (const auto& [body, param] : cases) {
    const ApiError e = error_of([&] { parse_chat(body); });
    EXPECT_EQ(e.status(), 400) << body;
    EXPECT_EQ(e.param(), param) << e.what();
  }
}

TEST(CompletionRequest, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = R"({"model": "m", "prompt": "x", "user": )" + std::string(100000, '[');
  const ApiError e = error_of([&] { parse_request_body(deep); });
  EXPECT_EQ(e.status(), 400);
  EXPECT_THAT(e.what(), HasSubstr("nests deeper than 32 levels at line 1, column"));
}

TEST(CompletionRequest, BadMessagesNameTheMessage) {
  const ApiError role = error_of([] {
    parse_chat(
        R"({"model": "m", "messages": [{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}]})");
  });
  EXPECT_EQ(role.param(), "messages[1].role");
  const ApiError content =
      error_of([] { parse_chat(R"({"model": "m", "messages": [{"role": "user"}]})"); });
  EXPECT_EQ(content.param(), "messages[0].content");
  const ApiError empty = error_of([] { parse_chat(R"({"model": "m", "messages": []})"); });
  EXPECT_EQ(empty.param(), "messages");
  const ApiError text_only = error_of([] {
    parse_chat(R"({"model": "m", "messages": [{"role": "user", "content": "a"}], "prompt": "x"})");
  });
  EXPECT_EQ(text_only.param(), "prompt");
}

TEST(ApiErrors, HaveTheirStatusesAndOpenAiShape) {
  EXPECT_EQ(unauthorized().status(), 401);
  EXPECT_EQ(model_not_found("x").status(), 404);
  EXPECT_EQ(route_not_found("GET", "/x").status(), 404);
  EXPECT_EQ(body_too_large(10).status(), 413);
  EXPECT_EQ(overloaded("full").status(), 503);
  const Json body = error_json(model_not_found("gpt-9"));
  EXPECT_EQ(body,
            Json::parse(R"({"error": {"message": "the model 'gpt-9' does not exist on this server",
      "type": "invalid_request_error", "param": "model", "code": "model_not_found"}})"));
  EXPECT_TRUE(error_json(unauthorized())["error"]["param"].is_null());
}

const ResponseHeader kText{CompletionKind::Text, "cmpl-1", 1700000000, "stories"};
const ResponseHeader kChat{CompletionKind::Chat, "chatcmpl-1", 1700000000, "stories"};

TEST(CompletionRequest, LogprobsAskForTheTopTokens) {
  EXPECT_EQ(parse_text(R"({"model": "m", "prompt": "x"})").sampling.logprobs, -1);
  EXPECT_EQ(parse_text(R"({"model": "m", "prompt": "x", "logprobs": 0})").sampling.logprobs, 0);
  EXPECT_EQ(parse_text(R"({"model": "m", "prompt": "x", "logprobs": 5})").sampling.logprobs, 5);
  const char* chat = R"({"model": "m", "messages": [{"role": "user", "content": "x"}], )";
  EXPECT_EQ(parse_chat(std::string(chat) + R"("logprobs": false})").sampling.logprobs, -1);
  EXPECT_EQ(parse_chat(std::string(chat) + R"("logprobs": true})").sampling.logprobs, 0);
  EXPECT_EQ(
      parse_chat(std::string(chat) + R"("logprobs": true, "top_logprobs": 20})").sampling.logprobs,
      20);
  for (const char* bad : {R"("top_logprobs": 2})", R"("logprobs": false, "top_logprobs": 2})",
                          R"("logprobs": true, "top_logprobs": 21})", R"("logprobs": 3})"}) {
    try {
      parse_chat(std::string(chat) + bad);
      ADD_FAILURE() << bad;
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << bad;
      EXPECT_THAT(e.param(), HasSubstr("logprobs")) << bad;
    }
  }
}

// Token 1 is "a", 2 is byte C3 (the first half of "é"), 3 is byte A9 (its second half) then "b".
std::string test_token_bytes(int32_t id) {
  static const char* const bytes[] = {"", "a", "\xC3",
                                      "\xA9"
                                      "b"};
  return bytes[id];
}

TEST(CompletionResponse, LogprobsInTheTextAndChatShapes) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<int32_t> ids = {1, 2, 3};
  const std::vector<TokenLogprobs> lps = {{-0.5f, {{1, -0.5f}, {3, -1.5f}}},
                                          {-2.0f, {{1, -0.25f}, {2, -2.0f}}},
                                          {-inf, {{1, -0.125f}, {3, -inf}}}};
  const Json text = logprobs_json(CompletionKind::Text, ids, lps, test_token_bytes, 4);
  EXPECT_EQ(text["tokens"], Json::array({"a", "\xC3",
                                         "\xA9"
                                         "b"}));
  EXPECT_EQ(text["token_logprobs"], Json::parse("[-0.5, -2.0, -9999.0]"));
  EXPECT_EQ(text["text_offset"], Json::parse("[4, 5, 6]"));
  EXPECT_EQ(text["top_logprobs"][0], (Json{{"a", -0.5},
                                           {"\xA9"
                                            "b",
                                            -1.5}}));
  EXPECT_EQ(text["top_logprobs"][1], (Json{{"a", -0.25}, {"\xC3", -2.0}}));
  EXPECT_EQ(text["top_logprobs"][2], (Json{{"a", -0.125},
                                           {"\xA9"
                                            "b",
                                            -9999.0}}));
  const Json chat = logprobs_json(CompletionKind::Chat, ids, lps, test_token_bytes);
  ASSERT_EQ(chat["content"].size(), 3u);
  const Json a = {{"token", "a"}, {"logprob", -0.5}, {"bytes", {97}}};
  const Json a9b = {{"token",
                     "\xA9"
                     "b"},
                    {"logprob", -1.5},
                    {"bytes", {169, 98}}};
  Json first = a;
  first["top_logprobs"] = Json::array({a, a9b});
  EXPECT_EQ(chat["content"][0], first);
  EXPECT_EQ(chat["content"][1]["token"], "\xC3");
  EXPECT_EQ(chat["content"][1]["bytes"], Json::parse("[195]"));
  EXPECT_EQ(chat["content"][2]["logprob"], -9999.0);
  EXPECT_EQ(chat["content"][2]["top_logprobs"][1]["bytes"], Json::parse("[169, 98]"));
  EXPECT_EQ(completion_json(kChat, {{0, "ab", FinishReason::Stop, chat}},
                            {1, 3})["choices"][0]["logprobs"],
            chat);
  EXPECT_EQ(
      chunk_json(kText, 0, "a", true, FinishReason::None, false, text)["choices"][0]["logprobs"],
      text);
}

TEST(CompletionResponse, WholeResponsesCarryChoicesAndUsage) {
  const Json text = completion_json(
      kText, {{0, "Once", FinishReason::Length}, {1, "Hi", FinishReason::Stop}}, {5, 7});
  EXPECT_EQ(text,
            Json::parse(R"({"id": "cmpl-1", "object": "text_completion", "created": 1700000000,
      "model": "stories", "choices": [
        {"index": 0, "text": "Once", "logprobs": null, "finish_reason": "length"},
        {"index": 1, "text": "Hi", "logprobs": null, "finish_reason": "stop"}],
      "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12}})"));
  const Json chat = completion_json(kChat, {{0, "Hello", FinishReason::Stop}}, {3, 1});
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["choices"][0]["message"],
            Json::parse(R"({"role": "assistant", "content": "Hello"})"));
}

// A large answer is sent as text pieces, choice by choice (issue 27: building it as one JSON
// value took 1.4 GB for 87 MB); joined, they are the same response.
TEST(CompletionResponse, PiecesJoinToTheWholeResponse) {
  const std::vector<Choice> choices = {
      {0, "Once", FinishReason::Length, Json{{"content", Json::array()}}},
      {1, "Hi \"there\"", FinishReason::Stop},
      {2, "", FinishReason::Abort}};
  for (const ResponseHeader& header : {kText, kChat}) {
    std::vector<std::string> texts;
    for (const Choice& c : choices) texts.push_back(dump_body(choice_json(header.kind, c)));
    std::string joined;
    for (const auto& piece : completion_pieces(header, texts, {5, 7})) joined += piece;
    EXPECT_EQ(Json::parse(joined), completion_json(header, choices, {5, 7})) << joined;
  }
  std::string empty;
  for (const auto& piece : completion_pieces(kText, {}, {1, 0})) empty += piece;
  EXPECT_EQ(Json::parse(empty), completion_json(kText, {}, {1, 0}));
}

TEST(CompletionResponse, ChunksStreamDeltasThenTheFinishAndTheUsage) {
  const Json first = chunk_json(kChat, 1, "Hel", true, FinishReason::None, true);
  EXPECT_EQ(
      first,
      Json::parse(R"({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000,
      "model": "stories", "choices": [{"index": 1, "delta": {"role": "assistant", "content": "Hel"},
      "logprobs": null, "finish_reason": null}], "usage": null})"));
  const Json last = chunk_json(kChat, 1, "", false, FinishReason::Length, false);
  EXPECT_EQ(last["choices"][0]["delta"], Json::object());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  EXPECT_FALSE(last.contains("usage"));
  EXPECT_EQ(chunk_json(kText, 0, "lo", false, FinishReason::None, false)["choices"][0]["text"],
            "lo");
  const Json usage = usage_chunk_json(kText, {4, 6});
  EXPECT_EQ(usage["choices"], Json::array());
  EXPECT_EQ(usage["usage"]["total_tokens"], 10);
  EXPECT_EQ(sse_event(Json{{"a", 1}}), "data: {\"a\":1}\n\n");
  EXPECT_EQ(std::string(kSseDone), "data: [DONE]\n\n");
  // Text cut inside a UTF-8 sequence is replaced, never thrown on.
  EXPECT_THAT(sse_event(Json{{"t", std::string("\xE2\x82")}}), HasSubstr("\xEF\xBF\xBD"));
}

TEST(PrometheusText, HasGaugesCountersAndCumulativeHistograms) {
  ServiceMetrics m;
  m.num_running = 3;
  m.num_waiting = 2;
  m.num_kv_blocks = 100;
  m.num_kv_blocks_used = 25;
  m.num_prompt_tokens = 40;
  m.num_generation_tokens = 70;
  m.num_preemptions = 1;
  m.num_requests_aborted = 4;
  m.time_to_first_token = LatencyHistogram({0.1, 1.0});
  m.time_to_first_token.observe(0.05);
  m.time_to_first_token.observe(0.5);
  m.time_to_first_token.observe(5.0);
  const std::string text = prometheus_text(m, "st\"ories", {1024, 77});
  const std::string labels = R"({model_name="st\"ories"})";
  EXPECT_THAT(text,
              HasSubstr("# TYPE sluice:num_requests_running gauge\nsluice:num_requests_running" +
                        labels + " 3\n"));
  EXPECT_THAT(text, HasSubstr("sluice:num_requests_waiting" + labels + " 2\n"));
  EXPECT_THAT(text, HasSubstr("sluice:kv_cache_blocks_used" + labels + " 25\n"));
  EXPECT_THAT(text, HasSubstr("sluice:kv_cache_usage_perc" + labels + " 0.25\n"));
  EXPECT_THAT(text,
              HasSubstr("# TYPE sluice:prompt_tokens_total counter\nsluice:prompt_tokens_total" +
                        labels + " 40\n"));
  EXPECT_THAT(text, HasSubstr("sluice:generation_tokens_total" + labels + " 70\n"));
  EXPECT_THAT(text, HasSubstr("sluice:num_preemptions_total" + labels + " 1\n"));
  EXPECT_THAT(text, HasSubstr("sluice:request_aborted_total" + labels + " 4\n"));
  EXPECT_THAT(text, HasSubstr("sluice:request_body_bytes_in_flight" + labels + " 1024\n"));
  EXPECT_THAT(text, HasSubstr("sluice:response_entries_in_flight" + labels + " 77\n"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "# TYPE sluice:time_to_first_token_seconds histogram\n"
          "sluice:time_to_first_token_seconds_bucket{model_name=\"st\\\"ories\",le=\"0.1\"} 1\n"
          "sluice:time_to_first_token_seconds_bucket{model_name=\"st\\\"ories\",le=\"1\"} 2\n"
          "sluice:time_to_first_token_seconds_bucket{model_name=\"st\\\"ories\",le=\"+Inf\"} 3\n"
          "sluice:time_to_first_token_seconds_sum" +
          labels +
          " 5.55\n"
          "sluice:time_to_first_token_seconds_count" +
          labels + " 3\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE sluice:inter_token_latency_seconds histogram\n"));
  // A model without recurrent state has no state-slot gauges.
  EXPECT_THAT(text, Not(HasSubstr("state_slots")));
}

TEST(PrometheusText, AHybridModelsStateSlotsStandBesideTheBlocks) {
  ServiceMetrics m;
  m.latest_step.num_state_slots = 36;
  m.latest_step.num_state_slots_used = 5;
  m.latest_step.num_state_checkpoints = 2;
  m.latest_step.state_slot_bytes = 1536;
  m.latest_step.num_state_checkpoint_hits = 9;
  const std::string text = prometheus_text(m, "qwen35", {0, 0});
  const std::string labels = R"({model_name="qwen35"})";
  EXPECT_THAT(text, HasSubstr("# TYPE sluice:state_slots_used gauge\nsluice:state_slots_used" +
                              labels + " 5\n"));
  EXPECT_THAT(text, HasSubstr("sluice:state_slots_total" + labels + " 36\n"));
  EXPECT_THAT(text, HasSubstr("sluice:state_checkpoints" + labels + " 2\n"));
  EXPECT_THAT(text, HasSubstr("sluice:state_slot_bytes" + labels + " 1536\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE sluice:state_checkpoint_hits_total counter\n"
                              "sluice:state_checkpoint_hits_total" +
                              labels + " 9\n"));
}

}  // namespace
}  // namespace sluice::test
