// `sluice serve` end to end: the real executable on stories260K on a free port, spoken to over
// HTTP with cpp-httplib's client. Every endpoint, streaming, the error statuses (and serving
// on after each), an API key, a client that disconnects mid-stream (its request is aborted and
// its blocks freed), concurrent streams, and the same text as `sluice generate`.
#include <gmock/gmock.h>
#include <sys/time.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cerrno>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <thread>

#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

class ServeCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { server_ = new ServeProcess(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  static ServeProcess* server_;
};

ServeProcess* ServeCli::server_ = nullptr;

// The server-sent events of a streamed response, up to and including [DONE].
std::vector<std::string> sse_data(const std::string& body) {
  std::vector<std::string> out;
  size_t start = 0;
  while ((start = body.find("data: ", start)) != std::string::npos) {
    const size_t end = body.find("\n\n", start);
    out.push_back(body.substr(start + 6, end - start - 6));
    start = end;
  }
  return out;
}

TEST_F(ServeCli, ListsTheModelAndAnswersHealth) {
  auto res = server_->client().Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const Json models = Json::parse(res->body);
  EXPECT_EQ(models["object"], "list");
  ASSERT_EQ(models["data"].size(), 1u);
  EXPECT_EQ(models["data"][0]["id"], kModel);
  EXPECT_EQ(models["data"][0]["max_model_len"], 512);
  EXPECT_EQ(server_->client().Get("/health")->status, 200);
}

TEST_F(ServeCli, CompletionStreamedEqualsCompletionWhole) {
  const auto [status, whole] = server_->post(
      "/v1/completions", R"({"model": "stories", "prompt": "Once upon a time", "max_tokens": 40})");
  ASSERT_EQ(status, 200) << whole.dump();
  EXPECT_EQ(whole["object"], "text_completion");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(whole["usage"]["completion_tokens"], 40);
  EXPECT_EQ(whole["usage"]["prompt_tokens"], 5);  // BOS + 4 tokens
  auto res =
      server_->client().Post("/v1/completions",
                             R"({"model": "stories", "prompt": "Once upon a time", "max_tokens": 40,
                                        "stream": true, "stream_options": {"include_usage": true}})",
                             "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/event-stream"));
  const auto events = sse_data(res->body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  std::string text;
  std::string finish_reason;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    const Json chunk = Json::parse(events[i]);
    EXPECT_TRUE(chunk["usage"].is_null());
    text += chunk["choices"][0]["text"].get<std::string>();
    if (!chunk["choices"][0]["finish_reason"].is_null())
      finish_reason = chunk["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(text, whole["choices"][0]["text"]);
  EXPECT_EQ(finish_reason, "length");
  const Json usage = Json::parse(events[events.size() - 2]);
  EXPECT_EQ(usage["choices"], Json::array());
  EXPECT_EQ(usage["usage"], whole["usage"]);
}

// Log-probabilities of a greedy completion: one per token, the chosen token the likeliest, the
// tokens' bytes making up the text; the stream carries the same numbers chunk by chunk.
TEST_F(ServeCli, LogprobsComeWithEveryTokenStreamedOrWhole) {
  const auto [status, whole] = server_->post(
      "/v1/completions",
      R"({"model": "stories", "prompt": "Once upon a time", "max_tokens": 20, "logprobs": 2})");
  ASSERT_EQ(status, 200) << whole.dump();
  const Json& lp = whole["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 20u) << lp.dump();
  ASSERT_EQ(lp["token_logprobs"].size(), 20u);
  std::string joined;
  for (size_t i = 0; i < 20; ++i) {
    const std::string token = lp["tokens"][i];
    EXPECT_EQ(lp["text_offset"][i], joined.size());
    joined += token;
    const double logprob = lp["token_logprobs"][i];
    EXPECT_LE(logprob, 0.0);
    ASSERT_TRUE(lp["top_logprobs"][i].contains(token)) << lp["top_logprobs"][i].dump();
    double best = -1e9;
    for (const auto& [text, value] : lp["top_logprobs"][i].items())
      best = std::max(best, value.get<double>());
    EXPECT_EQ(lp["top_logprobs"][i][token].get<double>(), best);  // greedy: the likeliest
    EXPECT_EQ(lp["top_logprobs"][i][token].get<double>(), logprob);
  }
  EXPECT_EQ(joined, whole["choices"][0]["text"]);

  auto res = server_->client().Post(
      "/v1/chat/completions",
      R"({"model": "stories", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 12,
          "logprobs": true, "top_logprobs": 3, "stream": true})",
      "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  Json streamed = Json::array();
  for (const auto& event : sse_data(res->body)) {
    if (event == "[DONE]") continue;
    const Json chunk = Json::parse(event);
    const Json& logprobs = chunk["choices"][0]["logprobs"];
    if (logprobs.is_null()) continue;
    for (const auto& entry : logprobs["content"]) streamed.push_back(entry);
  }
  const auto [chat_status, chat] = server_->post(
      "/v1/chat/completions",
      R"({"model": "stories", "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 12,
          "logprobs": true, "top_logprobs": 3})");
  ASSERT_EQ(chat_status, 200);
  const Json& content = chat["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), chat["usage"]["completion_tokens"].get<size_t>());
  EXPECT_EQ(streamed, content);
  for (const auto& entry : content) EXPECT_EQ(entry["top_logprobs"].size(), 3u);
}

TEST_F(ServeCli, ChatWithSeedRepeatsAndEqualsGenerateOnTheSameRow) {
  const std::string dir = make_temp_dir("serve-vs-generate");
  const std::string input =
      write_input_jsonl(dir, R"({"messages": [{"role": "user", "content": "Tell me a story"}]})"
                             "\n");
  const auto generated = run_sluice(
      {"generate", "--model", shared_path("models/stories260K/gguf/stories260K-f32.gguf"),
       "--input", input, "--output", dir + "/out.jsonl", "--temperature", "0.8", "--seed", "7",
       "--max-tokens", "30", "--quiet"});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;
  const Json row = read_jsonl(dir + "/out.jsonl").at(0);
  const std::string body =
      R"({"model": "stories", "messages": [{"role": "user", "content": "Tell me a story"}],
                               "temperature": 0.8, "seed": 7, "max_completion_tokens": 30, "n": 2})";
  const auto [status, first] = server_->post("/v1/chat/completions", body);
  ASSERT_EQ(status, 200) << first.dump();
  const auto [status_again, again] = server_->post("/v1/chat/completions", body);
  ASSERT_EQ(status_again, 200);
  EXPECT_EQ(first["object"], "chat.completion");
  ASSERT_EQ(first["choices"].size(), 2u);
  EXPECT_EQ(first["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(first["choices"], again["choices"]);  // same seed, same text
  EXPECT_NE(first["choices"][0]["message"]["content"], first["choices"][1]["message"]["content"]);
  EXPECT_EQ(first["choices"][0]["message"]["content"], row["output"]);  // sample 0 is the row
  EXPECT_EQ(first["usage"]["prompt_tokens"], row["prompt_tokens"]);
  EXPECT_EQ(first["usage"]["completion_tokens"], 2 * row["output_tokens"].get<int>());
}

// response_format and structured_outputs constrain every choice, sampled at temperature 1:
// each finished output parses and has the schema's fields, or is one of the choices; a schema
// the grammar engine refuses is a 400 naming the parameter, and the server goes on.
TEST_F(ServeCli, StructuredOutputsConstrainEveryChoice) {
  const std::string schema_body = R"({"model": "stories", "temperature": 1, "seed": 3, "n": 4,
      "max_completion_tokens": 120,
      "messages": [{"role": "user", "content": "Describe a cat"}],
      "response_format": {"type": "json_schema", "json_schema": {"name": "cat", "strict": true,
        "schema": {"type": "object", "properties": {
          "name": {"type": "string", "maxLength": 12},
          "age": {"type": "integer", "minimum": 0, "maximum": 30},
          "indoor": {"type": "boolean"}},
          "required": ["name", "age", "indoor"], "additionalProperties": false}}}})";
  const auto [status, response] = server_->post("/v1/chat/completions", schema_body);
  ASSERT_EQ(status, 200) << response.dump();
  ASSERT_EQ(response["choices"].size(), 4u);
  int finished = 0;
  for (const Json& choice : response["choices"]) {
    if (choice["finish_reason"] != "stop") continue;
    ++finished;
    const Json value = Json::parse(choice["message"]["content"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(value.is_object()) << choice.dump();
    EXPECT_EQ(value.size(), 3u) << value.dump();
    EXPECT_TRUE(value["name"].is_string() && value["name"].get<std::string>().size() <= 12);
    EXPECT_TRUE(value["age"].is_number_integer() && value["age"].get<int>() >= 0 &&
                value["age"].get<int>() <= 30);
    EXPECT_TRUE(value["indoor"].is_boolean());
  }
  EXPECT_GT(finished, 0);

  const auto [choice_status, chosen] = server_->post(
      "/v1/completions", R"({"model": "stories", "prompt": "Once", "temperature": 1, "n": 4,
                             "max_tokens": 20, "structured_outputs": {"choice": ["yes", "no"]}})");
  ASSERT_EQ(choice_status, 200) << chosen.dump();
  for (const Json& choice : chosen["choices"]) {
    EXPECT_TRUE(choice["text"] == "yes" || choice["text"] == "no") << choice.dump();
  }

  const auto [bad_status, bad] =
      server_->post("/v1/chat/completions",
                    R"({"model": "stories", "messages": [{"role": "user", "content": "x"}],
          "response_format": {"type": "json_schema", "json_schema": {"schema":
            {"type": "object", "if": {"required": ["a"]}, "then": {}}}}})");
  EXPECT_EQ(bad_status, 400) << bad.dump();
  EXPECT_EQ(bad["error"]["param"], "response_format") << bad.dump();
  EXPECT_THAT(bad["error"]["message"].get<std::string>(),
              ::testing::HasSubstr("unsupported keyword 'if'"));
  const auto [after_status, after] = server_->post(
      "/v1/completions", R"({"model": "stories", "prompt": "Once", "max_tokens": 3})");
  EXPECT_EQ(after_status, 200) << after.dump();
}

TEST_F(ServeCli, TokenizeAndDetokenizeRoundTrip) {
  const auto [status, tokens] = server_->post("/tokenize", R"({"prompt": "Once upon a time"})");
  ASSERT_EQ(status, 200) << tokens.dump();
  EXPECT_EQ(tokens["count"], 5);
  EXPECT_EQ(tokens["tokens"][0], 1);  // BOS
  EXPECT_EQ(tokens["max_model_len"], 512);
  const auto [status_back, text] =
      server_->post("/detokenize", Json{{"tokens", tokens["tokens"]}}.dump());
  ASSERT_EQ(status_back, 200);
  EXPECT_EQ(text["prompt"], "Once upon a time");
  const auto [status_chat, chat] =
      server_->post("/tokenize", R"({"messages": [{"role": "user", "content": "Hi"}]})");
  EXPECT_EQ(status_chat, 200);
  EXPECT_GT(chat["count"].get<int>(), 1);
  EXPECT_EQ(server_->post("/detokenize", R"({"tokens": [1, 99999]})").first, 400);
}

struct BadRequest {
  const char* path;
  std::string body;
  int status;
  const char* param;  // "" when the error names none
};

TEST_F(ServeCli, BadRequestsGetTheirStatusAndTheServerGoesOn) {
  const BadRequest cases[] = {
      {"/v1/completions", R"({"model": "stories", "prompt": )", 400, ""},
      {"/v1/completions", R"({"model": "gpt-4", "prompt": "x"})", 404, "model"},
      {"/v1/completions", R"({"model": "stories", "prompt": "x", "n": 0})", 400, "n"},
      {"/v1/completions", R"({"model": "stories", "prompt": "x", "max_tokens": -1})", 400,
       "max_tokens"},
      {"/v1/completions", R"({"model": "stories", "prompt": "x", "colour": "red"})", 400, "colour"},
      {"/v1/completions", R"({"model": "stories", "prompt": "x", "logprobs": 21})", 400,
       "logprobs"},
      {"/v1/chat/completions",
       R"({"model": "stories", "messages": [{"role": "user", "content": "x"}], "top_logprobs": 3})",
       400, "top_logprobs"},
      {"/v1/chat/completions", R"({"model": "stories", "messages": "hi"})", 400, "messages"},
      {"/v1/completions", "{\"model\": \"stories\", \"prompt\": \"\xFF\"}", 400, ""},
      {"/v1/completions",
       R"({"model": "stories", "prompt": "x", "user": )" + std::string(5000, '['), 400, ""},
      {"/v1/completions", R"({"model": "stories", "prompt": [1, 100000]})", 400, "prompt"},
      {"/v1/completions", R"({"model": "stories", "prompt": ")" + std::string(4000, 'x') + "\"}",
       400, "prompt"},
      {"/v1/completions",
       R"({"model": "stories", "prompt": ")" + std::string(10 << 20, 'x') + "\"}", 413, ""},
      {"/v1/nothing", "{}", 404, ""},
  };
  for (const auto& c : cases) {
    const auto [status, body] = server_->post(c.path, c.body);
    const std::string what = std::string(c.path) + " " + c.body.substr(0, 80);
    EXPECT_EQ(status, c.status) << what << " -> " << body.dump();
    ASSERT_TRUE(body.contains("error")) << what;
    EXPECT_TRUE(body["error"]["message"].is_string()) << what;
    EXPECT_TRUE(body["error"]["type"].is_string()) << what;
    if (*c.param) {
      EXPECT_EQ(body["error"]["param"], c.param) << what;
    }
    // The next request is served normally.
    const auto [ok, next] = server_->post(
        "/v1/completions", R"({"model": "stories", "prompt": "Hi", "max_tokens": 3})");
    EXPECT_EQ(ok, 200) << "after " << what;
  }
  auto res = server_->client().Get("/v1/nothing");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_TRUE(server_->is_running());
}

TEST_F(ServeCli, AClientThatDisconnectsMidStreamAbortsItsRequest) {
  const double aborted_before = server_->metrics()["request_aborted_total"];
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  // Four requests of 128 samples, each to the end of the context: seconds of work, so they
  // are all still running when the client goes away.
  req.body = R"({"model": "stories", "prompt": ["Once", "The dog", "A cat", "Lily"], "n": 128,
                 "max_tokens": 100000, "ignore_eos": true, "stream": true})";
  int num_chunks = 0;
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++num_chunks < 3; };
  auto client = server_->client();
  const auto res = client.send(req);
  EXPECT_FALSE(res);  // cancelled by the receiver
  EXPECT_EQ(num_chunks, 3);
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  std::map<std::string, double> m;
  do {
    std::this_thread::sleep_for(20ms);
    m = server_->metrics();
  } while ((m["num_requests_running"] != 0 || m["kv_cache_blocks_used"] != 0 ||
            m["request_aborted_total"] < aborted_before + 4) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(m["num_requests_running"], 0);
  EXPECT_EQ(m["num_requests_waiting"], 0);
  EXPECT_EQ(m["kv_cache_blocks_used"], 0);
  EXPECT_EQ(m["request_aborted_total"],
            aborted_before + 4);  // every prompt's request, not finished
}

// A client that gives up on a whole (non-streamed) answer and closes its connection aborts its
// requests too: they do not run on for nobody.
TEST_F(ServeCli, AClientThatLeavesBeforeAWholeAnswerAbortsItsRequest) {
  const double aborted_before = server_->metrics()["request_aborted_total"];
  {
    auto client = server_->client();
    client.set_read_timeout(0, 300000);  // gives up after 0.3 s and closes the connection
    const auto res =
        client.Post("/v1/completions",
                    R"({"model": "stories", "prompt": ["Once", "The dog", "A cat", "Lily"],
                                     "n": 128, "max_tokens": 100000, "ignore_eos": true})",
                    "application/json");
    EXPECT_FALSE(res);
  }
  const auto deadline = std::chrono::steady_clock::now() + 20s;
  std::map<std::string, double> m;
  do {
    std::this_thread::sleep_for(20ms);
    m = server_->metrics();
  } while ((m["num_requests_running"] != 0 || m["request_aborted_total"] < aborted_before + 4) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(m["num_requests_running"], 0);
  EXPECT_EQ(m["kv_cache_blocks_used"], 0);
  EXPECT_EQ(m["request_aborted_total"], aborted_before + 4);
  // The server goes on answering.
  const auto [status, body] = server_->post(
      "/v1/completions", Json{{"model", kModel}, {"prompt", "Once"}, {"max_tokens", 4}}.dump());
  EXPECT_EQ(status, 200);
}

// 64 clients streaming 4 requests each at once: no errors, every text the one run alone gives.
TEST_F(ServeCli, ConcurrentStreamsGetTheTextTheyGetAlone) {
  const std::vector<std::string> prompts = {"Once",    "The dog", "A cat",   "Lily",
                                            "Tom had", "The sun", "One day", "A big"};
  std::vector<std::string> alone;
  for (const auto& p : prompts) {
    const auto [status, body] = server_->post(
        "/v1/completions", Json{{"model", kModel}, {"prompt", p}, {"max_tokens", 30}}.dump());
    ASSERT_EQ(status, 200);
    alone.push_back(body["choices"][0]["text"]);
  }
  constexpr int kClients = 64;
  constexpr int kRequestsPerClient = 4;
  std::vector<std::string> streamed(kClients * kRequestsPerClient);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      for (int k = 0; k < kRequestsPerClient; ++k) {
        const size_t idx = static_cast<size_t>(c * kRequestsPerClient + k);
        const std::string body = Json{
            {"model", kModel},
            {"prompt", prompts[idx % prompts.size()]},
            {"max_tokens", 30},
            {"stream", true}}.dump();
        auto res = server_->client().Post("/v1/completions", body, "application/json");
        if (!res || res->status != 200) {
          streamed[idx] = res ? "HTTP " + std::to_string(res->status) + ": " + res->body
                              : "no response: " + httplib::to_string(res.error());
          continue;
        }
        for (const auto& event : sse_data(res->body)) {
          if (event != "[DONE]")
            streamed[idx] += Json::parse(event)["choices"][0]["text"].get<std::string>();
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  for (size_t i = 0; i < streamed.size(); ++i)
    EXPECT_EQ(streamed[i], alone[i % prompts.size()]) << "stream " << i;
}

TEST_F(ServeCli, MetricsCountTheTokensOfFinishedRequests) {
  const auto before = server_->metrics();
  const auto [status, body] = server_->post(
      "/v1/completions", R"({"model": "stories", "prompt": ["Once", "A dog"], "max_tokens": 7})");
  ASSERT_EQ(status, 200);
  const auto after = server_->metrics();
  EXPECT_EQ(after.at("prompt_tokens_total") - before.at("prompt_tokens_total"),
            body["usage"]["prompt_tokens"].get<double>());
  EXPECT_EQ(after.at("generation_tokens_total") - before.at("generation_tokens_total"), 14);
  EXPECT_EQ(after.at("kv_cache_blocks_total"), before.at("kv_cache_blocks_total"));
  auto res = server_->client().Get("/metrics");
  EXPECT_THAT(res->body, HasSubstr("# TYPE sluice:time_to_first_token_seconds histogram"));
  EXPECT_THAT(
      res->body,
      HasSubstr("sluice:inter_token_latency_seconds_bucket{model_name=\"stories\",le=\"+Inf\"}"));
}

TEST(ServeCliKey, AnApiKeyIsRequiredAndAWrongOneRefused) {
  ServeProcess server({"--api-key", "s3cret"});
  const std::string body = R"({"model": "stories", "prompt": "Hi", "max_tokens": 2})";
  EXPECT_EQ(server.post("/v1/completions", body).first, 401);
  EXPECT_EQ(server.post("/v1/completions", body, {{"Authorization", "Bearer wrong"}}).first, 401);
  const auto [status, error] =
      server.post("/v1/completions", body, {{"Authorization", "Bearer wrong"}});
  EXPECT_EQ(error["error"]["code"], "invalid_api_key");
  EXPECT_EQ(server.post("/v1/completions", body, {{"Authorization", "Bearer s3cret"}}).first, 200);
  EXPECT_EQ(server.client().Get("/v1/models")->status, 401);
  EXPECT_EQ(server.client().Get("/health")->status, 200);  // probes need no key
}

// Issue 27 item 7: `serve --host 0.0.0.0` without --api-key started silently. It is refused
// unless --allow-unauthenticated says so, and then it warns.
TEST(ServeCliKey, AReachableAddressWithoutAKeyNeedsConsent) {
  BackgroundProcess refused({SLUICE_EXECUTABLE, "serve", "--model",
                             shared_path("models/stories260K/gguf/stories260K-f32.gguf"), "--host",
                             "0.0.0.0", "--port", std::to_string(free_port())});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (refused.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(refused.is_running()) << "serves 0.0.0.0 without a key";
  const ProcessResult result = refused.wait();
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--api-key"));
  EXPECT_THAT(result.err, HasSubstr("--allow-unauthenticated"));

  ServeProcess server({"--host", "0.0.0.0", "--allow-unauthenticated"});
  EXPECT_EQ(
      server.post("/v1/completions", R"({"model": "stories", "prompt": "Hi", "max_tokens": 2})")
          .first,
      200);
  EXPECT_THAT(server.kill_and_read_stderr(), HasSubstr("WARNING: serving on 0.0.0.0"));
}

// /metrics is open by default, as /health is (README: what it shows); --protect-metrics puts it
// behind the key.
TEST(ServeCliKey, MetricsCanBePutBehindTheKey) {
  ServeProcess open({"--api-key", "s3cret"});
  EXPECT_EQ(open.client().Get("/metrics")->status, 200);
  ServeProcess closed({"--api-key", "s3cret", "--protect-metrics"});
  EXPECT_EQ(closed.client().Get("/metrics")->status, 401);
  EXPECT_EQ(closed.client().Get("/metrics", {{"Authorization", "Bearer s3cret"}})->status, 200);
  EXPECT_EQ(closed.client().Get("/health")->status, 200);
  const auto usage = run_sluice({"serve", "--model", "x", "--protect-metrics"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--protect-metrics needs --api-key"));
}

// Past --max-num-waiting the server answers 503 and serves again once the queue drains.
TEST(ServeCliQueue, AFullQueueIs503) {
  ServeProcess server({"--max-num-seqs", "1", "--max-num-waiting", "1"});
  // One slot: of this request's 128 samples one runs and the rest wait, for seconds.
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.set_header("Content-Type", "application/json");
  req.body =
      R"({"model": "stories", "prompt": "Once", "n": 128, "max_tokens": 100000, "ignore_eos": true,
                 "stream": true})";
  std::atomic<bool> is_released{false};
  std::thread holder([&] {
    req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
      return !is_released.load();
    };
    server.client().send(req);
  });
  // The hang-up (and join) happens however the checks below end.
  std::shared_ptr<void> release(nullptr, [&](void*) {
    is_released = true;  // the holder hangs up: its samples are aborted
    holder.join();
  });
  // Once the prompt is computed its samples fork: one runs, 127 wait. (Right after the submit
  // the request itself counts as waiting, before it runs: too early to test.)
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (server.metrics()["num_requests_waiting"] < 100 &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(5ms);
  const std::string body = R"({"model": "stories", "prompt": "Hi", "max_tokens": 3})";
  const auto [status, error] = server.post("/v1/completions", body);
  ASSERT_EQ(status, 503) << error.dump();
  EXPECT_EQ(error["error"]["code"], "overloaded");
  EXPECT_THAT(error["error"]["message"].get<std::string>(), HasSubstr("queue is full"));
  release.reset();
  const auto drained = std::chrono::steady_clock::now() + 30s;
  while (server.metrics()["num_requests_waiting"] > 0 && std::chrono::steady_clock::now() < drained)
    std::this_thread::sleep_for(5ms);
  EXPECT_EQ(server.post("/v1/completions", body).first, 200);
}

// A client that sends a streaming request and never reads is cut off after --write-timeout; its
// request is aborted, and the server answers others meanwhile and after.
TEST(ServeCliSlowClient, AClientThatNeverReadsIsCutOff) {
  // An 8000-character model name rides in every chunk: the stream (128 samples x 510 tokens)
  // is far more than the socket buffers hold (4 MiB at most here), and a few decode steps fill
  // them, so the server's writes block and time out. (The test once slept a fixed 6 s with
  // 1000-character chunks; in a sanitizer build under CI's load that was not enough to fill
  // the buffers, nothing blocked, and the whole stream came through once the client read.)
  const std::string name(8000, 'm');
  ServeProcess server({"--write-timeout", "2", "--served-model-name", name});
  const std::string body = R"({"model": ")" + name +
                           R"(", "prompt": "Once", "n": 128, "max_tokens": 100000,
                               "ignore_eos": true, "stream": true})";
  const std::string request =
      "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;  // a small receive buffer: the server's writes block sooner
  ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(server.port()));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::send(fd, request.data(), request.size(), 0), static_cast<ssize_t>(request.size()));
  const std::string short_body = R"({"model": ")" + name + R"(", "prompt": "Hi", "max_tokens": 3})";
  EXPECT_EQ(server.post("/v1/completions", short_body).first, 200);  // served meanwhile
  // Reading nothing until the stream's request has ended (the server counts it finished once
  // it was cut off and aborted, or, were it never cut off, once all its tokens were made):
  // however slowly a loaded machine decodes, the verdict below does not depend on a guess of
  // how long that takes.
  const auto ended = std::chrono::steady_clock::now() + 240s;
  while (server.metrics()["request_success_total"] < 2 && std::chrono::steady_clock::now() < ended)
    std::this_thread::sleep_for(50ms);
  EXPECT_EQ(server.metrics()["request_aborted_total"], 1) << "the stream was not cut off";
  // What the sockets held, then the end the server made: EOF or a reset, not a stream that
  // goes on once the client reads again (a recv that waits 10 s for more).
  const timeval wait{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));
  std::vector<char> buffer(1 << 16);
  size_t received = 0;
  ssize_t n = 0;
  while ((n = ::recv(fd, buffer.data(), buffer.size(), 0)) > 0) received += static_cast<size_t>(n);
  const int recv_errno = errno;
  ::close(fd);
  EXPECT_TRUE(n == 0 || recv_errno == ECONNRESET)
      << "recv returned " << n << " (errno " << recv_errno << ") after " << received << " bytes";
  EXPECT_LT(received, size_t{128} * 510 * name.size());
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  std::map<std::string, double> m;
  do {
    std::this_thread::sleep_for(50ms);
    m = server.metrics();
  } while ((m["num_requests_running"] != 0 || m["kv_cache_blocks_used"] != 0) &&
           std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(m["num_requests_running"], 0);
  EXPECT_EQ(m["kv_cache_blocks_used"], 0);
  EXPECT_EQ(server.post("/v1/completions", short_body).first, 200);
}

TEST(ServeCliPort, APortInUseIsRefused) {
  ServeProcess first;
  BackgroundProcess second({SLUICE_EXECUTABLE, "serve", "--model",
                            shared_path("models/stories260K/gguf/stories260K-f32.gguf"), "--port",
                            std::to_string(first.port())});
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (second.is_running() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(second.is_running()) << "a second server listens on the first one's port";
  const ProcessResult result = second.wait();
  EXPECT_NE(result.exit_code, 0);
  EXPECT_THAT(result.err, HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(first.port())));
  EXPECT_TRUE(first.is_running());
}

TEST(ServeCliUsage, BadOptionsAreUsageErrors) {
  const auto r = run_sluice({"serve", "--port", "70000", "--model", "x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--port"));
  const auto missing = run_sluice(
      {"serve", "--model", "/nonexistent/model.gguf", "--port", std::to_string(free_port())});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/model.gguf"));
}

}  // namespace
}  // namespace sluice::test
