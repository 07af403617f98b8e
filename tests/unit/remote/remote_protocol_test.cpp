// The wire format of remote jobs: request bodies (chat and text, sampling parameters only when
// set, grammars as response_format or structured_outputs), answers parsed or refused with what
// is wrong, OpenAI error messages and Retry-After headers. Expected values are written out by
// hand from the OpenAI and vLLM API references.
#include "app/remote/remote_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "engine/core/error.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

ServiceRequest chat_request() {
  ServiceRequest r;
  r.is_chat = true;
  r.messages = {{"system", "Be brief."}, {"user", "Name a colour."}};
  r.prompt_text = "Be brief.\n\nName a colour.";
  r.sampling.max_tokens = 40;
  return r;
}

// The request carrying source as its grammar.
ServiceRequest constrained(ServiceRequest r, const GrammarSource& source) {
  r.sampling.grammar = std::make_shared<const GrammarSource>(source);
  return r;
}

TEST(RemoteProtocol, ChatBodyCarriesMessagesAndOnlyTheParametersThatAreSet) {
  const Json body = remote_request_body(chat_request(), "m", 1234);
  EXPECT_EQ(body["model"], "m");
  EXPECT_EQ(body["messages"], Json::parse(R"([{"role":"system","content":"Be brief."},
                                               {"role":"user","content":"Name a colour."}])"));
  EXPECT_FALSE(body.contains("prompt"));
  EXPECT_EQ(body["max_tokens"], 40);
  EXPECT_EQ(body["temperature"], 0.0);
  EXPECT_EQ(body["n"], 1);
  EXPECT_EQ(body["seed"], 1234);
  for (const char* absent :
       {"stop", "top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty",
        "stop_token_ids", "ignore_eos", "response_format", "structured_outputs"})
    EXPECT_FALSE(body.contains(absent)) << absent;
  EXPECT_STREQ(remote_request_path(chat_request()), "/chat/completions");
}

TEST(RemoteProtocol, TextBodySendsThePromptAndVllmExtrasWhenTheyDifferFromDefaults) {
  ServiceRequest r = chat_request();
  r.is_chat = false;
  r.sampling.top_k = 20;
  r.sampling.min_p = 0.05f;
  r.sampling.repetition_penalty = 1.1f;
  r.sampling.presence_penalty = 0.5f;
  r.sampling.stop = {"\n\n"};
  r.sampling.ignore_eos = true;
  const Json body = remote_request_body(r, "m", 7);
  EXPECT_EQ(body["prompt"], "Be brief.\n\nName a colour.");
  EXPECT_FALSE(body.contains("messages"));
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_NEAR(body["min_p"].get<double>(), 0.05, 1e-6);
  EXPECT_NEAR(body["repetition_penalty"].get<double>(), 1.1, 1e-6);
  EXPECT_NEAR(body["presence_penalty"].get<double>(), 0.5, 1e-6);
  EXPECT_EQ(body["stop"], Json::array({"\n\n"}));
  EXPECT_EQ(body["ignore_eos"], true);
  EXPECT_STREQ(remote_request_path(r), "/completions");
}

TEST(RemoteProtocol, InvalidUtf8InAPromptIsReplacedNotThrown) {
  ServiceRequest r = chat_request();
  r.messages.back().content = "bad \xC3\x28 byte";
  const Json body = remote_request_body(r, "m", 0);
  EXPECT_EQ(body["messages"][1]["content"], "bad \xEF\xBF\xBD( byte");
}

TEST(RemoteProtocol, GrammarsGoAsResponseFormatForChatJsonAndStructuredOutputsOtherwise) {
  const GrammarSource schema{GrammarSourceKind::JsonSchema, "s.json", R"({"type":"object"})", {}};
  Json chat = remote_request_body(constrained(chat_request(), schema), "m", 0);
  EXPECT_EQ(chat["response_format"]["type"], "json_schema");
  EXPECT_EQ(chat["response_format"]["json_schema"]["schema"], Json::parse(R"({"type":"object"})"));
  ServiceRequest text = chat_request();
  text.is_chat = false;
  EXPECT_EQ(remote_request_body(constrained(text, schema), "m", 0)["structured_outputs"]["json"],
            Json::parse(R"({"type":"object"})"));
  const GrammarSource object{GrammarSourceKind::JsonObject, "--json-object", "", {}};
  EXPECT_EQ(remote_request_body(constrained(chat_request(), object), "m", 0)["response_format"],
            Json::parse(R"({"type":"json_object"})"));
  const GrammarSource regex{GrammarSourceKind::Regex, "--regex", "[0-9]+", {}};
  EXPECT_EQ(remote_request_body(constrained(chat_request(), regex), "m", 0)["structured_outputs"],
            Json::parse(R"({"regex":"[0-9]+"})"));
  const GrammarSource choice{GrammarSourceKind::Choice, "--choice", "", {"yes", "no"}};
  EXPECT_EQ(remote_request_body(constrained(chat_request(), choice), "m", 0)["structured_outputs"],
            Json::parse(R"({"choice":["yes","no"]})"));
  const GrammarSource gbnf{GrammarSourceKind::Gbnf, "g.gbnf", "root ::= \"a\"", {}};
  EXPECT_EQ(remote_request_body(constrained(chat_request(), gbnf), "m",
                                0)["structured_outputs"]["grammar"],
            "root ::= \"a\"");
  const GrammarSource broken{GrammarSourceKind::JsonSchema, "broken.json", "{not json", {}};
  try {
    remote_request_body(constrained(chat_request(), broken), "m", 0);
    FAIL() << "a schema that is not JSON was sent";
  } catch (const InvalidGrammar& e) {
    EXPECT_THAT(e.what(), HasSubstr("broken.json"));
  }
}

TEST(RemoteProtocol, AnswersParseIntoTextFinishReasonAndUsage) {
  FinishedRequest chat = parse_remote_response(
      R"({"choices":[{"index":0,"message":{"role":"assistant","content":"Blue."},
          "finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":3}})",
      true);
  EXPECT_EQ(chat.output_text, "Blue.");
  EXPECT_EQ(chat.finish_reason, FinishReason::Stop);
  EXPECT_EQ(chat.num_prompt_tokens, 12);
  EXPECT_EQ(chat.num_output_tokens, 3);
  FinishedRequest text = parse_remote_response(
      R"({"choices":[{"index":0,"text":" and then","finish_reason":"length"}]})", false);
  EXPECT_EQ(text.output_text, " and then");
  EXPECT_EQ(text.finish_reason, FinishReason::Length);
  EXPECT_EQ(text.num_output_tokens, -1);  // no usage: unknown, not zero
  FinishedRequest empty = parse_remote_response(
      R"({"choices":[{"message":{"role":"assistant","content":""},"finish_reason":"stop"}]})",
      true);
  EXPECT_EQ(empty.output_text, "");  // an empty string is an answer; a null one is not (below)
}

// Issue 27: a null content (what OpenAI sends beside a refusal or tool calls) was stored as a
// finished empty row. It is malformed: refused with the reason, so the driver retries it and
// then fails the row saying why.
TEST(RemoteProtocol, ANullContentIsMalformedNotAnEmptyAnswer) {
  const std::tuple<const char*, bool, std::vector<const char*>> cases[] = {
      {R"({"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"stop"}]})",
       true,
       {"message.content is null"}},
      {R"({"choices":[{"message":{"content":null,"refusal":"I cannot help with that."},
           "finish_reason":"stop"}]})",
       true,
       {"message.content is null", "refused: I cannot help with that."}},
      {R"({"choices":[{"message":{"content":null,"tool_calls":[{"id":"t"}]},
           "finish_reason":"tool_calls"}]})",
       true,
       {"message.content is null", "called a tool"}},
      {R"({"choices":[{"text":null,"finish_reason":"stop"}]})", false, {"text is null"}},
  };
  for (const auto& [body, is_chat, expected] : cases) {
    try {
      parse_remote_response(body, is_chat);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const Error& e) {
      for (const char* part : expected) EXPECT_THAT(e.what(), HasSubstr(part)) << body;
    }
  }
}

TEST(RemoteProtocol, MalformedAnswersAreRefusedSayingWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not a JSON object"},
      {R"([1,2])", "not a JSON object"},
      {R"({"choices":[]})", "no choices"},
      {R"({"choices":[{"finish_reason":"stop"}]})", "no message.content"},
      {R"({"choices":[{"message":{"content":5},"finish_reason":"stop"}]})", "no message.content"},
      {R"({"choices":[{"message":{"content":"x"}}]})", "no finish_reason"},
      {R"({"choices":[{"message":{"content":"x"},"finish_reason":"exploded"}]})", "exploded"},
      {R"({"choices":[{"message":{"content":"x"},"finish_reason":"stop"}],"usage":{"completion_tokens":-4}})",
       "usage.completion_tokens"},
  };
  for (const auto& [body, expected] : cases) {
    try {
      parse_remote_response(body, true);
      ADD_FAILURE() << "accepted: " << body;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(expected)) << body;
    }
  }
}

TEST(RemoteProtocol, ErrorMessagesComeFromOpenAiErrorsOrTheBodyCutShort) {
  EXPECT_EQ(remote_error_message(R"({"error":{"message":"model not found","type":"x"}})"),
            "model not found");
  EXPECT_EQ(remote_error_message(R"({"error":"overloaded"})"), "overloaded");
  EXPECT_EQ(remote_error_message("<html>Bad gateway</html>"), "<html>Bad gateway</html>");
  const std::string long_body(1000, 'x');
  EXPECT_EQ(remote_error_message(long_body), std::string(300, 'x') + "…");
  // Invalid bytes become U+FFFD (three bytes each): still cut to 300 bytes, at a character.
  const std::string message = remote_error_message(std::string(200, '\xFF'));
  EXPECT_EQ(message, [] {
    std::string expected;
    for (int i = 0; i < 100; ++i) expected += "\xEF\xBF\xBD";
    return expected + "…";
  }());
}

TEST(RemoteProtocol, RetryAfterIsSecondsOrAnHttpDate) {
  const auto now = std::chrono::system_clock::from_time_t(1790000000);  // 2026-09-21 14:13:20 UTC
  EXPECT_EQ(parse_retry_after("3", now), 3.0);
  EXPECT_EQ(parse_retry_after(" 0.5 ", now), 0.5);
  EXPECT_EQ(parse_retry_after("Mon, 21 Sep 2026 14:13:50 GMT", now), 30.0);
  EXPECT_EQ(parse_retry_after("Mon, 21 Sep 2026 14:00:00 GMT", now), 0.0);  // past: no wait
  EXPECT_EQ(parse_retry_after("", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("soon", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("3s", now), std::nullopt);
  EXPECT_EQ(parse_retry_after("99999999999999999999", now), 1e9);  // capped, not overflowed
}

}  // namespace
}  // namespace sluice::test
