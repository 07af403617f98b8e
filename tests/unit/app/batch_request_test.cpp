#include "app/batch_request.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/core/error.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::ordered_json;

DatasetRow batch_row(size_t line, const std::string& text) {
  DatasetRow row;
  row.row_index = static_cast<int64_t>(line) - 1;
  row.line = line;
  row.fields = Json::parse(text);
  return row;
}

std::string chat_line(const std::string& custom_id, const std::string& body_extra) {
  return R"({"custom_id": ")" + custom_id +
         R"(", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "m", "messages": [{"role": "user", "content": "hi"}])" +
         body_extra + "}}";
}

// Returns the message of the Error that parsing row throws ("" when it does not throw).
std::string error_of(BatchRequests& requests, const DatasetRow& row) {
  try {
    requests.parse(row, SamplingParams{});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(BatchRequest, EachLineBringsItsOwnSamplingParameters) {
  BatchRequests requests("in.jsonl");
  SamplingParams defaults;
  defaults.max_tokens = 99;
  defaults.temperature = 0.5f;
  defaults.seed = 11;
  const BatchRequest a = requests.parse(
      batch_row(1, chat_line("a", R"(, "max_tokens": 3, "temperature": 0, "seed": 5, "n": 2)")),
      defaults);
  const BatchRequest b = requests.parse(
      batch_row(2, chat_line("b", R"(, "max_completion_tokens": 40, "temperature": 1.5,
                                     "seed": 6, "stop": ["."], "top_p": 0.25)")),
      defaults);
  const BatchRequest c = requests.parse(batch_row(3, chat_line("c", "")), defaults);
  EXPECT_EQ(a.custom_id, "a");
  EXPECT_EQ(a.request.kind, CompletionKind::Chat);
  EXPECT_EQ(a.request.sampling.max_tokens, 3);
  EXPECT_EQ(a.request.sampling.temperature, 0.0f);
  EXPECT_EQ(a.request.sampling.seed, 5u);
  EXPECT_EQ(a.request.sampling.n, 2);
  EXPECT_EQ(b.request.sampling.max_tokens, 40);
  EXPECT_EQ(b.request.sampling.temperature, 1.5f);
  EXPECT_EQ(b.request.sampling.seed, 6u);
  EXPECT_EQ(b.request.sampling.top_p, 0.25f);
  EXPECT_EQ(b.request.sampling.stop, std::vector<std::string>{"."});
  EXPECT_EQ(b.request.sampling.n, 1);
  // What a body leaves out comes from the command line.
  EXPECT_EQ(c.request.sampling.max_tokens, 99);
  EXPECT_EQ(c.request.sampling.temperature, 0.5f);
  EXPECT_EQ(c.request.sampling.seed, 11u);
  ASSERT_EQ(c.request.messages.size(), 1u);
  EXPECT_EQ(c.request.messages[0].content, "hi");
}

TEST(BatchRequest, CompletionLinesAndStructuredOutputs) {
  BatchRequests requests("in.jsonl");
  const BatchRequest text =
      requests.parse(batch_row(1, R"({"custom_id": "t", "method": "POST", "url": "/v1/completions",
                       "body": {"model": "m", "prompt": "Once", "max_tokens": 7}})"),
                     SamplingParams{});
  EXPECT_EQ(text.request.kind, CompletionKind::Text);
  ASSERT_EQ(text.request.prompts.size(), 1u);
  EXPECT_EQ(text.request.prompts[0].text, "Once");
  EXPECT_EQ(text.request.sampling.max_tokens, 7);
  const BatchRequest json = requests.parse(
      batch_row(2, chat_line("j", R"(, "response_format": {"type": "json_object"})")),
      SamplingParams{});
  ASSERT_TRUE(json.request.grammar.has_value());
  EXPECT_EQ(json.request.grammar->kind, GrammarSourceKind::JsonObject);
}

TEST(BatchRequest, BadLinesAreNamedByFileAndLine) {
  BatchRequests requests("in.jsonl");
  EXPECT_THAT(error_of(requests, batch_row(4, R"({"method": "POST", "url": "/v1/completions",
                                                    "body": {"model": "m", "prompt": "x"}})")),
              HasSubstr("in.jsonl:4: a batch line needs a non-empty string 'custom_id'"));
  EXPECT_THAT(error_of(requests, batch_row(5, R"({"custom_id": 7, "method": "POST",
                                                    "url": "/v1/completions", "body": {}})")),
              HasSubstr("in.jsonl:5: a batch line needs a non-empty string 'custom_id'"));
  EXPECT_THAT(error_of(requests, batch_row(6, R"({"custom_id": "g", "method": "GET",
                                          "url": "/v1/completions", "body": {}})")),
              HasSubstr(R"(in.jsonl:6: batch line 'g': 'method' must be "POST", not "GET")"));
  const std::string embeddings =
      error_of(requests, batch_row(7, R"({"custom_id": "e", "method": "POST",
                                          "url": "/v1/embeddings", "body": {"model": "m"}})"));
  EXPECT_THAT(embeddings, HasSubstr("in.jsonl:7: batch line 'e': url \"/v1/embeddings\" is not "
                                    "supported"));
  EXPECT_THAT(error_of(requests, batch_row(8, R"({"custom_id": "o", "method": "POST",
                                                    "url": "/v1/completions", "body": "x"})")),
              HasSubstr("in.jsonl:8: batch line 'o': 'body' must be a JSON object"));
  // The server's 400 message, prefixed with the place.
  EXPECT_THAT(error_of(requests, batch_row(9, chat_line("t", R"(, "temperature": 9)"))),
              HasSubstr("in.jsonl:9: batch line 't': invalid body: 'temperature' must be "
                        "between 0 and 2"));
  EXPECT_THAT(error_of(requests, batch_row(10, chat_line("u", R"(, "frobnicate": 1)"))),
              HasSubstr("in.jsonl:10: batch line 'u': invalid body: unknown parameter "
                        "'frobnicate'"));
  EXPECT_THAT(error_of(requests, batch_row(11, R"({"custom_id": "p", "method": "POST",
                                                     "url": "/v1/completions",
                                                     "body": {"model": "m", "prompt": ["a", "b"]}})")),
              HasSubstr("in.jsonl:11: batch line 'p': invalid body: 'prompt' must hold one "
                        "prompt"));
}

TEST(BatchRequest, DuplicateCustomIdNamesBothLines) {
  BatchRequests requests("in.jsonl");
  requests.parse(batch_row(2, chat_line("same", "")), SamplingParams{});
  EXPECT_THAT(error_of(requests, batch_row(5, chat_line("same", ""))),
              HasSubstr("in.jsonl:5: custom_id \"same\" is already used on line 2"));
  // A row a resumed job already holds still claims its id.
  BatchRequests resumed("in.jsonl");
  resumed.remember(batch_row(3, chat_line("kept", "")));
  EXPECT_THAT(error_of(resumed, batch_row(9, chat_line("kept", ""))),
              HasSubstr("in.jsonl:9: custom_id \"kept\" is already used on line 3"));
}

TEST(BatchRequest, UrlsMapToCompletionKinds) {
  EXPECT_EQ(batch_url_kind("/v1/chat/completions"), CompletionKind::Chat);
  EXPECT_EQ(batch_url_kind("/v1/completions"), CompletionKind::Text);
  EXPECT_EQ(batch_url_kind("/v1/embeddings"), std::nullopt);
  EXPECT_EQ(batch_line_kind(Json::parse(R"({"url": "/v1/completions"})")), CompletionKind::Text);
  EXPECT_EQ(batch_line_kind(Json::parse(R"({"url": 3})")), std::nullopt);
}

}  // namespace
}  // namespace sluice
