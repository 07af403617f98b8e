// sluice bench --endpoint: the seed's experiment over HTTP against a real `sluice serve`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"

namespace sluice::test {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

// n short rows, each its own prompt.
std::string small_input(const std::string& name, int num_rows) {
  std::string jsonl;
  for (int i = 0; i < num_rows; ++i)
    jsonl +=
        Json({{"prompt", "Once upon a time there was a cat number " + std::to_string(i)}}).dump() +
        "\n";
  return write_input_jsonl(make_temp_dir(name), jsonl);
}

TEST(BenchHttpCli, BothModesStreamEveryRowAndCountUsageTokens) {
  ServeProcess server;
  const std::string input = small_input("bench_http_modes", 20);
  const auto r = run_sluice({"bench", "--endpoint", server.url(), "--input", input, "--limit", "16",
                             "--clients", "4", "--max-tokens", "16", "--ignore-eos", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = Json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(out["model"], kModel);
  ASSERT_EQ(out["modes"].size(), 2u) << r.out;
  EXPECT_EQ(out["modes"][0]["mode"], "sequential");
  EXPECT_EQ(out["modes"][1]["mode"], "concurrent");
  EXPECT_EQ(out["modes"][0]["clients"], 1);
  EXPECT_EQ(out["modes"][1]["clients"], 4);
  for (const Json& m : out["modes"]) {
    SCOPED_TRACE(m.dump());
    EXPECT_EQ(m["requests"], 16);
    EXPECT_EQ(m["errors"], 0);
    EXPECT_EQ(m["output_tokens"], 16 * 16);
    EXPECT_GT(m["prompt_tokens"].get<int64_t>(), 16);
    EXPECT_GT(m["wall_s"].get<double>(), 0.0);
    EXPECT_GT(m["output_tokens_per_s"].get<double>(), 0.0);
    EXPECT_GT(m["ttft_p50_ms"].get<double>(), 0.0);
    EXPECT_GE(m["ttft_p99_ms"].get<double>(), m["ttft_p50_ms"].get<double>());
    EXPECT_GE(m["itl_p50_ms"].get<double>(), 0.0);
    // Deltas that arrive in one network read share a timestamp: on a fast machine stories260K's
    // 16 tokens can all come in one read, so the gaps may all be 0 ms.
    EXPECT_GE(m["itl_p99_ms"].get<double>(), m["itl_p50_ms"].get<double>());
  }
  EXPECT_GT(out["concurrent_over_sequential"].get<double>(), 0.0);
}

TEST(BenchHttpCli, PlainCompletionsPrintTheTable) {
  ServeProcess server;
  const std::string input = small_input("bench_http_table", 4);
  const auto r =
      run_sluice({"bench", "--endpoint", server.url(), "--input", input, "--modes", "concurrent",
                  "--clients", "2", "--max-tokens", "8", "--ignore-eos", "--no-chat-template"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("/completions"));
  EXPECT_THAT(r.out, HasSubstr("| concurrent | 2 | 4 |"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("| sequential |")));
}

TEST(BenchHttpCli, AFailedRequestIsCountedAndTheRunGoesOn) {
  ServeProcess server;
  // The second row is longer than stories260K's context: the server refuses it with 400.
  std::string long_prompt;
  for (int i = 0; i < 2000; ++i) long_prompt += "cat ";
  const std::string input = write_input_jsonl(make_temp_dir("bench_http_failed_row"),
                                              Json({{"prompt", "Once upon a time"}}).dump() + "\n" +
                                                  Json({{"prompt", long_prompt}}).dump() + "\n" +
                                                  Json({{"prompt", "The dog"}}).dump() + "\n");
  const auto r = run_sluice({"bench", "--endpoint", server.url(), "--input", input, "--max-tokens",
                             "4", "--ignore-eos", "--clients", "2", "--json"});
  EXPECT_EQ(r.exit_code, 3) << r.err;  // some requests failed
  const Json out = Json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  ASSERT_EQ(out["modes"].size(), 2u);
  for (const Json& m : out["modes"]) {
    SCOPED_TRACE(m.dump());
    EXPECT_EQ(m["requests"], 3);
    EXPECT_EQ(m["errors"], 1);
    EXPECT_EQ(m["output_tokens"], 2 * 4);
    ASSERT_EQ(m["error_samples"].size(), 1u);
    EXPECT_THAT(m["error_samples"][0].get<std::string>(), HasSubstr("request 2: HTTP 400"));
    EXPECT_THAT(m["error_samples"][0].get<std::string>(), HasSubstr("max_model_len"));
  }
}

TEST(BenchHttpCli, TheKeyOfApiKeyEnvIsSentAsABearerToken) {
  ServeProcess server({"--api-key", "bench-secret"});
  const std::string input = small_input("bench_http_key", 2);
  const std::vector<std::string> args = {SLUICE_EXECUTABLE, "bench", "--endpoint", server.url(),
                                         "--input",         input,   "--modes",    "sequential",
                                         "--max-tokens",    "4",     "--json"};
  const auto refused = run_process(args, {"QT_QPA_PLATFORM=offscreen"});
  EXPECT_EQ(refused.exit_code, 1) << refused.out;  // the start-up check names the refusal
  EXPECT_THAT(refused.err, HasSubstr(server.url()));
  EXPECT_THAT(refused.err, HasSubstr("--api-key-env"));
  std::vector<std::string> with_key = args;
  with_key.insert(with_key.end(), {"--api-key-env", "BENCH_HTTP_KEY"});
  const auto r =
      run_process(with_key, {"QT_QPA_PLATFORM=offscreen", "BENCH_HTTP_KEY=bench-secret"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = Json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_EQ(out["modes"][0]["errors"], 0);
  EXPECT_EQ(out["modes"][0]["output_tokens"], 2 * 4);
}

TEST(BenchHttpCli, StreamsOnAKeptAliveConnectionAreNotHeldForDelayedAcks) {
  // One client reuses its connection. Were the server's small writes (response header, then
  // each event) left to Nagle's algorithm, each would wait for the client's delayed ACK (40 ms
  // or more on Linux); stories260K's 8 tokens take about a millisecond.
  ServeProcess server;
  const std::string input = small_input("bench_http_nodelay", 12);
  const auto r = run_sluice({"bench", "--endpoint", server.url(), "--input", input, "--modes",
                             "sequential", "--max-tokens", "8", "--ignore-eos", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json out = Json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out;
  EXPECT_LT(out["modes"][0]["ttft_p50_ms"].get<double>(), 25.0) << r.out;
}

TEST(BenchHttpCli, AMalformedUsageChunkIsAnErrorNotACrash) {
  // A server whose stream is well formed but whose usage count is not a number.
  httplib::Server fake;
  fake.Get("/v1/models", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"object":"list","data":[{"id":"fake"}]})", "application/json");
  });
  fake.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n"
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":\"x\"}}\n\n"
        "data: [DONE]\n\n",
        "text/event-stream");
  });
  const int port = fake.bind_to_any_port("127.0.0.1");
  std::thread serving([&] { fake.listen_after_bind(); });
  const std::string input = small_input("bench_http_bad_usage", 2);
  const auto r =
      run_sluice({"bench", "--endpoint", "http://127.0.0.1:" + std::to_string(port) + "/v1",
                  "--input", input, "--modes", "sequential", "--json"});
  fake.stop();
  serving.join();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  const Json out = Json::parse(r.out, nullptr, false);
  ASSERT_TRUE(out.is_object()) << r.out << r.err;
  EXPECT_EQ(out["modes"][0]["errors"], 2);
  EXPECT_THAT(out["modes"][0]["error_samples"][0].get<std::string>(),
              HasSubstr("completion_tokens"));
}

TEST(BenchHttpCli, NothingListeningIsAnErrorNamingTheUrl) {
  const std::string url = "http://127.0.0.1:" + std::to_string(free_port()) + "/v1";
  const std::string input = small_input("bench_http_refused_url", 2);
  const auto r = run_sluice({"bench", "--endpoint", url, "--input", input, "--max-tokens", "4"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_THAT(r.err, HasSubstr(url));
  EXPECT_THAT(r.err, HasSubstr("does not answer"));
}

TEST(BenchHttpCli, AnUnknownModeIsAUsageError) {
  const auto r = run_sluice(
      {"bench", "--endpoint", "http://127.0.0.1:1/v1", "--input", "x.jsonl", "--modes", "static"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown mode 'static'"));
}

}  // namespace
}  // namespace sluice::test
