// Request bodies at the edges of what the parser takes (completion_request.h): nulls, integers
// past 64 bits, numbers past a double, the limits on prompts, choices and stop strings, mixed
// prompt lists, the unsupported parameters in their harmless forms, and the chat-only ones.
// openai_protocol_test.cpp holds the ordinary cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "app/server/api_error.h"
#include "app/server/completion_request.h"
#include "engine/core/error.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

CompletionRequest parse_edge(const std::string& body, CompletionKind kind = CompletionKind::Text,
                             const SamplingParams& defaults = {}) {
  return parse_completion_request(parse_request_body(body), kind, defaults);
}

// The ApiError a body is refused with; status 0 when it is accepted.
ApiError refusal_of(const std::string& body, CompletionKind kind = CompletionKind::Text) {
  try {
    parse_edge(body, kind);
  } catch (const ApiError& e) {
    return e;
  }
  return ApiError(0, "", "", "", "accepted");
}

std::string text_body(const std::string& fields) {
  return R"({"model": "m", "prompt": "x", )" + fields + "}";
}

std::string chat_body(const std::string& fields) {
  return R"({"model": "m", "messages": [{"role": "user", "content": "x"}], )" + fields + "}";
}

// Clients send null for "not set": the server's default holds, as when the key is left out.
// Caught: a null read as 0 or false (n 0, max_tokens 0, temperature 0).
TEST(CompletionRequestEdges, NullMeansLeftOut) {
  const SamplingParams defaults{.temperature = 0.6f, .max_tokens = 33};
  const CompletionRequest r =
      parse_edge(text_body(R"("n": null, "seed": null, "temperature": null, "max_tokens": null,
                  "stop": null, "logprobs": null, "stream": null, "stream_options": null,
                  "echo": null, "best_of": null, "suffix": null, "logit_bias": null,
                  "structured_outputs": null, "user": null)"),
                 CompletionKind::Text, defaults);
  EXPECT_EQ(r.sampling.n, 1);
  EXPECT_FALSE(r.has_seed);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.6f);
  EXPECT_EQ(r.sampling.max_tokens, 33);
  EXPECT_TRUE(r.sampling.stop.empty());
  EXPECT_EQ(r.sampling.logprobs, -1);
  EXPECT_FALSE(r.stream);
  EXPECT_FALSE(r.grammar);
  const CompletionRequest usage =
      parse_edge(text_body(R"("stream": true, "stream_options": {"include_usage": null})"));
  EXPECT_FALSE(usage.include_usage);
}

// Integers past what a field holds are refused, never wrapped: 2^64 - 1 as n is not -1, nor a
// huge count of choices; a seed takes the whole signed 64-bit range and nothing past it; a huge
// number is out of every range (and one past a double is not JSON the server reads).
TEST(CompletionRequestEdges, NumbersPastTheirTypesAreRefusedNotWrapped) {
  EXPECT_EQ(refusal_of(text_body(R"("n": 18446744073709551615)")).param(), "n");
  EXPECT_EQ(refusal_of(text_body(R"("n": 4294967297)")).param(), "n");  // 2^32 + 1
  EXPECT_EQ(refusal_of(text_body(R"("max_tokens": 16777217)")).param(), "max_tokens");
  EXPECT_EQ(parse_edge(text_body(R"("max_tokens": 16777216)")).sampling.max_tokens, 1 << 24);
  EXPECT_EQ(refusal_of(text_body(R"("top_k": 2147483648)")).param(), "top_k");
  EXPECT_EQ(parse_edge(text_body(R"("top_k": -1)")).sampling.top_k, -1);
  const CompletionRequest low = parse_edge(text_body(R"("seed": -9223372036854775808)"));
  EXPECT_TRUE(low.has_seed);
  EXPECT_EQ(low.sampling.seed, uint64_t{1} << 63);
  EXPECT_EQ(parse_edge(text_body(R"("seed": -1)")).sampling.seed,
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(parse_edge(text_body(R"("seed": 9223372036854775807)")).sampling.seed,
            uint64_t{9223372036854775807});
  EXPECT_EQ(refusal_of(text_body(R"("seed": 9223372036854775808)")).param(), "seed");
  EXPECT_EQ(refusal_of(text_body(R"("seed": 1.0)")).param(), "seed");
  for (const char* field : {"temperature", "top_p", "min_p", "presence_penalty",
                            "frequency_penalty", "repetition_penalty"}) {
    const ApiError large = refusal_of(text_body(str_cat("\"", field, "\": 1e300")));
    EXPECT_EQ(large.status(), 400) << field;
    EXPECT_EQ(large.param(), field);
    // Past a double the JSON reader itself refuses the number.
    EXPECT_EQ(refusal_of(text_body(str_cat("\"", field, "\": 1e400"))).status(), 400) << field;
  }
  EXPECT_FLOAT_EQ(parse_edge(text_body(R"("temperature": 2)")).sampling.temperature, 2.0f);
  EXPECT_FLOAT_EQ(parse_edge(text_body(R"("frequency_penalty": -2)")).sampling.frequency_penalty,
                  -2.0f);
}

// Prompts times n is capped (each is an engine request), and so are prompts and stop strings on
// their own. Caught: a cap checked on one factor only (1024 prompts of n 128: 131072 requests).
TEST(CompletionRequestEdges, PromptsChoicesAndStopStringsHaveTheirLimits) {
  std::string prompts = "[";
  for (size_t i = 0; i < kMaxPrompts; ++i) prompts += i == 0 ? "\"p\"" : ", \"p\"";
  const std::string max_prompts = prompts + "]";
  EXPECT_EQ(parse_edge(R"({"model": "m", "prompt": )" + max_prompts + "}").prompts.size(),
            kMaxPrompts);
  const ApiError too_many = refusal_of(R"({"model": "m", "prompt": )" + prompts + ", \"p\"]}");
  EXPECT_EQ(too_many.param(), "prompt");
  EXPECT_THAT(too_many.what(), HasSubstr("at most 1024 prompts"));
  const ApiError times_n = refusal_of(R"({"model": "m", "prompt": )" + max_prompts + ", \"n\": 2}");
  EXPECT_EQ(times_n.param(), "n");
  EXPECT_THAT(times_n.what(), HasSubstr("prompts times 'n'"));
  EXPECT_EQ(parse_edge(R"({"model": "m", "prompt": ["a", "b"], "n": 128})").sampling.n, 128);

  std::string stops = "[";
  for (size_t i = 0; i < kMaxStopStrings; ++i) stops += str_cat(i == 0 ? "" : ", ", "\"s", i, "\"");
  EXPECT_EQ(parse_edge(text_body("\"stop\": " + stops + "]")).sampling.stop.size(),
            kMaxStopStrings);
  EXPECT_EQ(refusal_of(text_body("\"stop\": " + stops + ", \"one more\"]")).param(), "stop");
  EXPECT_EQ(refusal_of(text_body(R"("stop": ["a", 1])")).param(), "stop");
  EXPECT_EQ(parse_edge(text_body(R"("stop": "END")")).sampling.stop,
            (std::vector<std::string>{"END"}));
}

// A prompt list may mix texts and token lists; an empty token list, a nested empty list, or a
// token id past 32 bits is refused, naming the prompt.
TEST(CompletionRequestEdges, PromptListsMayMixTextsAndTokens) {
  const auto mixed = parse_edge(R"({"model": "m", "prompt": ["Once", [1, 2, 3], ""]})").prompts;
  ASSERT_EQ(mixed.size(), 3u);
  EXPECT_FALSE(mixed[0].is_tokens);
  EXPECT_EQ(mixed[0].text, "Once");
  EXPECT_TRUE(mixed[1].is_tokens);
  EXPECT_EQ(mixed[1].token_ids, (std::vector<int32_t>{1, 2, 3}));
  EXPECT_FALSE(mixed[2].is_tokens);  // an empty text is a prompt (the BOS alone)
  for (const char* prompt : {"[[]]", "[\"a\", []]", "[2147483648]", "[[1, -2]]", "[1, \"a\"]",
                             "[1.5]", "[\"a\", 3]", "[null]", "true"}) {
    const ApiError e = refusal_of(str_cat(R"({"model": "m", "prompt": )", prompt, "}"));
    EXPECT_EQ(e.status(), 400) << prompt;
    EXPECT_EQ(e.param(), "prompt") << prompt << ": " << e.what();
  }
  EXPECT_EQ(parse_edge(R"({"model": "m", "prompt": [2147483647]})").prompts[0].token_ids[0],
            std::numeric_limits<int32_t>::max());
}

// OpenAI's parameters the engine cannot honour are accepted in the forms that ask for nothing
// (the official clients send some of them so) and refused, named, in any other form.
TEST(CompletionRequestEdges, UnsupportedParametersPassOnlyWhenTheyAskForNothing) {
  EXPECT_NO_THROW(parse_edge(text_body(R"("echo": false, "best_of": 1, "suffix": "",
                                          "logit_bias": {})")));
  EXPECT_NO_THROW(
      parse_edge(chat_body(R"("tools": [], "parallel_tool_calls": true)"), CompletionKind::Chat));
  EXPECT_EQ(refusal_of(text_body(R"("best_of": 2)")).param(), "best_of");
  EXPECT_EQ(refusal_of(text_body(R"("suffix": "end")")).param(), "suffix");
  EXPECT_EQ(refusal_of(text_body(R"("logit_bias": {"5": 100})")).param(), "logit_bias");
  EXPECT_EQ(refusal_of(text_body(R"("echo": "yes")")).param(), "echo");
  EXPECT_EQ(
      refusal_of(chat_body(R"("tools": [{"type": "function"}])"), CompletionKind::Chat).param(),
      "tools");
  EXPECT_EQ(refusal_of(chat_body(R"("tool_choice": "none")"), CompletionKind::Chat).param(),
            "tool_choice");
  // Chat's own parameters are unknown to a text completion, and the other way round.
  EXPECT_EQ(refusal_of(text_body(R"("max_completion_tokens": 5)")).param(),
            "max_completion_tokens");
  EXPECT_EQ(refusal_of(text_body(R"("response_format": {"type": "text"})")).param(),
            "response_format");
  EXPECT_EQ(refusal_of(chat_body(R"("echo": false)"), CompletionKind::Chat).param(), "echo");
}

// Chat: max_completion_tokens wins over max_tokens; top_logprobs needs logprobs true; a
// developer message is a system one; content parts must all be text.
TEST(CompletionRequestEdges, ChatParametersAndMessages) {
  const CompletionRequest both = parse_edge(
      chat_body(R"("max_tokens": 50, "max_completion_tokens": 7)"), CompletionKind::Chat);
  EXPECT_EQ(both.sampling.max_tokens, 7);
  EXPECT_EQ(parse_edge(chat_body(R"("logprobs": true)"), CompletionKind::Chat).sampling.logprobs,
            0);
  EXPECT_EQ(parse_edge(chat_body(R"("logprobs": false)"), CompletionKind::Chat).sampling.logprobs,
            -1);
  EXPECT_EQ(refusal_of(chat_body(R"("logprobs": false, "top_logprobs": 3)"), CompletionKind::Chat)
                .param(),
            "top_logprobs");
  EXPECT_EQ(refusal_of(chat_body(R"("logprobs": true, "top_logprobs": 21)"), CompletionKind::Chat)
                .param(),
            "top_logprobs");
  EXPECT_EQ(refusal_of(chat_body(R"("logprobs": 3)"), CompletionKind::Chat).param(), "logprobs");
  const std::pair<const char*, const char*> bad_messages[] = {
      {R"(["hi"])", "messages[0]"},
      {R"([{"role": 1, "content": "x"}])", "messages[0].role"},
      {R"([{"role": "tool", "content": "x"}])", "messages[0].role"},
      {R"([{"role": "user", "content": null}])", "messages[0].content"},
      {R"([{"role": "user", "content": 5}])", "messages[0].content"},
      {R"([{"role": "user", "content": "a"}, {"role": "user", "content": [{"type": "image_url",
           "image_url": {"url": "x"}}]}])",
       "messages[1].content"},
      {R"([{"role": "user", "content": [{"type": "text", "text": 5}]}])", "messages[0].content"},
      {R"({"role": "user", "content": "x"})", "messages"},
  };
  for (const auto& [messages, param] : bad_messages) {
    const ApiError e =
        refusal_of(str_cat(R"({"model": "m", "messages": )", messages, "}"), CompletionKind::Chat);
    EXPECT_EQ(e.status(), 400) << messages;
    EXPECT_EQ(e.param(), param) << messages << ": " << e.what();
  }
  const Conversation parts = parse_messages(nlohmann::json::parse(
      R"([{"role": "system", "content": []}, {"role": "user", "content": "x"}])"));
  EXPECT_EQ(parts[0].content, "");  // no parts: empty text
}

// What is not a JSON object is refused before any field is read, saying what it is.
TEST(CompletionRequestEdges, ABodyThatIsNotOneJsonObjectIsRefused) {
  for (const std::string& body :
       std::vector<std::string>{"", " ", "null", "\"text\"", "{} {}", "{\"model\": \"m\"} x",
                                std::string("{\"a\": \"\0\"}", 11)}) {
    try {
      parse_request_body(body);
      ADD_FAILURE() << "accepted '" << body << "'";
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 400) << body;
      EXPECT_EQ(e.param(), "") << body;
    }
  }
  EXPECT_EQ(parse_request_body("  {\"a\": 1}\n").at("a"), 1);
  // 32 levels are allowed, 33 are not.
  const auto nested = [](int depth) {
    return std::string(depth - 1, '[') + std::string(depth - 1, ']');
  };
  EXPECT_NO_THROW(parse_request_body("{\"u\": " + nested(32) + "}"));
  EXPECT_THROW(parse_request_body("{\"u\": " + nested(33) + "}"), ApiError);
}

}  // namespace
}  // namespace sluice::test
