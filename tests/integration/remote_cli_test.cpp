// Remote jobs end to end: `sluice generate --endpoint` against real `sluice serve` processes on
// stories260K and against the fault-injecting fake server. One of two servers killed mid-job:
// the job finishes on the other and its output equals a local run's (greedy). `generate` itself
// killed, then resumed on another server: nothing lost, nothing twice. 429 / 500 / dropped /
// slow / malformed answers are survived; a row the server always refuses is recorded as failed.
// A server that wants a key refuses a job without it, by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <set>
#include <thread>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"
#include "tests/support/fake_openai_server.h"
#include "tests/unit/remote/null_content_server.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using Fault = FakeOpenAiServer::Fault;

std::string write_rows(const std::string& dir, int n, const std::string& extra_row = "") {
  std::string jsonl;
  for (int i = 0; i < n; ++i)
    jsonl += nlohmann::json{{"id", "row-" + std::to_string(i)},
                            {"instruction", "Tell a story about a dog called " + std::to_string(i)}}
                 .dump() +
             "\n";
  if (!extra_row.empty())
    jsonl += nlohmann::json{{"id", "extra"}, {"instruction", extra_row}}.dump() + "\n";
  return write_input_jsonl(dir, jsonl);
}

std::vector<std::string> generate_args(std::vector<std::string> extra) {
  std::vector<std::string> a = {SLUICE_EXECUTABLE, "generate", "--max-tokens", "48"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// Waits until the job file holds at least n rows (or the run ended).
void wait_for_rows(BackgroundProcess& run, const std::string& job, int64_t n) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (run.is_running() && std::chrono::steady_clock::now() < deadline && committed_rows(job) < n)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

// The outputs by id, checking every id comes once.
std::map<std::string, std::string> outputs_by_id(const std::string& path) {
  std::map<std::string, std::string> out;
  for (const auto& row : read_jsonl(path)) {
    const std::string id = row["id"].get<std::string>();
    EXPECT_EQ(out.count(id), 0u) << id << " is in " << path << " twice";
    out[id] = row.value("output", "");
  }
  return out;
}

class RemoteCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("remote-cli");
    model_ = shared_path("models/stories260K/gguf/stories260K-f32.gguf");
  }
  std::map<std::string, std::string> local_outputs(const std::string& input) {
    const auto local = run_process(generate_args(
        {"--model", model_, "--input", input, "--output", dir_ + "/local.jsonl", "--quiet"}));
    EXPECT_EQ(local.exit_code, 0) << local.err;
    return outputs_by_id(dir_ + "/local.jsonl");
  }
  std::string dir_;
  std::string model_;
};

TEST_F(RemoteCli, AJobOutlivesOneOfItsTwoServersAndEqualsALocalRun) {
  const std::string input = write_rows(dir_, 200);
  ServeProcess a;
  ServeProcess b;
  const std::string job = dir_ + "/remote.sluicejob";
  BackgroundProcess run(
      generate_args({"--endpoint", a.url(), "--endpoint", b.url(), "--input", input, "--job", job,
                     "--output", dir_ + "/remote.jsonl", "--concurrency", "2", "--retries", "8"}));
  wait_for_rows(run, job, 30);
  ASSERT_TRUE(run.is_running()) << "the job ended before a server could be killed";
  a.kill_now();
  const ProcessResult result = run.wait();
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.err, HasSubstr(a.url()));  // it says the server left the rotation
  EXPECT_EQ(outputs_by_id(dir_ + "/remote.jsonl"), local_outputs(input));
}

TEST_F(RemoteCli, AKilledRemoteJobResumesOnAnotherServerLosingAndRepeatingNothing) {
  const std::string input = write_rows(dir_, 200);
  ServeProcess first;
  const std::string job = dir_ + "/remote.sluicejob";
  {
    BackgroundProcess run(generate_args(
        {"--endpoint", first.url(), "--input", input, "--job", job, "--concurrency", "2"}));
    wait_for_rows(run, job, 30);
    ASSERT_TRUE(run.is_running()) << "the job ended before it could be killed";
    EXPECT_EQ(run.kill_now(), 128 + SIGKILL);
  }
  const int64_t before = committed_rows(job);
  ASSERT_GE(before, 30);
  ASSERT_LT(before, 200);
  ServeProcess second;
  const auto resumed = run_process({SLUICE_EXECUTABLE, "generate", "--resume", job, "--endpoint",
                                    second.url(), "--output", dir_ + "/remote.jsonl", "--quiet"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(outputs_by_id(dir_ + "/remote.jsonl"), local_outputs(input));
  // The rows done before the kill were not sent again: the second server saw only the rest.
  const auto metrics = second.metrics();
  EXPECT_EQ(metrics.at("request_success_total"), 200 - before);
}

TEST_F(RemoteCli, FaultsAreSurvivedAndARowTheServerAlwaysRefusesIsRecordedAsFailed) {
  FakeOpenAiServer fake("fake", "1");
  fake.set_slow_seconds(30);
  fake.script({Fault::TooManyRequests, Fault::ServerError, Fault::Drop, Fault::Slow,
               Fault::Malformed, Fault::ServerError, Fault::Drop});
  const std::string input = write_rows(dir_, 20, "ALWAYS-500 for this one");
  const auto result = run_process(
      generate_args({"--endpoint", fake.url(), "--input", input, "--output", dir_ + "/out.jsonl",
                     "--request-timeout", "2", "--retries", "3", "--concurrency", "3"}));
  EXPECT_EQ(result.exit_code, 3) << result.err;  // some rows failed
  const auto rows = read_jsonl(dir_ + "/out.jsonl");
  ASSERT_EQ(rows.size(), 21u);
  for (const auto& row : rows) {
    if (row["id"] == "extra") {
      EXPECT_EQ(row["status"], "failed");
      EXPECT_THAT(row["error"].get<std::string>(),
                  HasSubstr(fake.url() + ": HTTP 500: the fake server broke"));
      EXPECT_THAT(row["error"].get<std::string>(), HasSubstr("gave up after 4 attempts"));
      continue;
    }
    EXPECT_EQ(row["output"], FakeOpenAiServer::answer_to(row["prompt"].get<std::string>()))
        << row.dump();
    EXPECT_FALSE(row.contains("status")) << row.dump();
  }
  // The failed row is named on stderr by its line.
  EXPECT_THAT(result.err, HasSubstr("input.jsonl:21: " + fake.url() + ": HTTP 500"));
}

// Issue 27: answers with `"content": null` were stored as finished empty rows (exit 0). Such a
// row is retried, then recorded as failed with the reason (exit 3); the other rows are done.
TEST_F(RemoteCli, ANullContentAnswerFailsItsRowWithTheReasonInsteadOfAnEmptyOutput) {
  NullContentServer server;
  const std::string input = write_rows(dir_, 6, std::string("Say ") + NullContentServer::kMarker);
  const std::string job = dir_ + "/null.sluicejob";
  const auto result =
      run_process(generate_args({"--endpoint", server.url(), "--input", input, "--output",
                                 dir_ + "/out.jsonl", "--job", job, "--retries", "1", "--quiet"}));
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_EQ(server.num_null_answers(), 2);  // the first answer and its one retry
  const auto rows = read_jsonl(dir_ + "/out.jsonl");
  ASSERT_EQ(rows.size(), 7u);
  for (const auto& row : rows) {
    if (row["id"] != "extra") {
      EXPECT_FALSE(row.contains("status")) << row.dump();
      continue;
    }
    EXPECT_EQ(row["status"], "failed") << row.dump();
    const std::string error = row.value("error", "");
    EXPECT_THAT(error, HasSubstr("message.content is null"));
    EXPECT_THAT(error, HasSubstr(NullContentServer::kRefusal));
    EXPECT_THAT(error, HasSubstr("gave up after 2 attempts"));
  }
  const JobCounts counts = JobStore::open(job)->counts();
  EXPECT_EQ(counts.done, 6);
  EXPECT_EQ(counts.failed, 1);
}

TEST_F(RemoteCli, AServerThatWantsAKeyRefusesAJobWithoutIt) {
  ServeProcess server({"--api-key", "k-123"});
  const std::string input = write_rows(dir_, 3);
  const auto refused = run_process(generate_args(
      {"--endpoint", server.url(), "--input", input, "--output", dir_ + "/out.jsonl"}));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr(server.url() + " refused the API key (HTTP 401"));
  EXPECT_THAT(refused.err, HasSubstr("--api-key-env"));
  ::setenv("SLUICE_REMOTE_TEST_KEY", "k-123", 1);
  const auto accepted = run_process(
      generate_args({"--endpoint", server.url(), "--api-key-env", "SLUICE_REMOTE_TEST_KEY",
                     "--input", input, "--output", dir_ + "/out.jsonl", "--quiet"}));
  EXPECT_EQ(accepted.exit_code, 0) << accepted.err;
  EXPECT_EQ(read_jsonl(dir_ + "/out.jsonl").size(), 3u);
}

TEST_F(RemoteCli, OpenAiBatchFilesRunAgainstAServerAsTheyRunLocally) {
  std::string jsonl;
  for (int i = 0; i < 6; ++i) {
    const bool is_chat = i % 2 == 0;
    nlohmann::json body = {{"model", "any"}, {"max_tokens", 10 + i}};
    if (is_chat)
      body["messages"] = {{{"role", "user"}, {"content", "Story " + std::to_string(i)}}};
    else
      body["prompt"] = "Once upon a time " + std::to_string(i);
    jsonl += nlohmann::json{{"custom_id", "req-" + std::to_string(i)},
                            {"method", "POST"},
                            {"url", is_chat ? "/v1/chat/completions" : "/v1/completions"},
                            {"body", body}}
                 .dump() +
             "\n";
  }
  // A prompt of token ids needs the model's tokenizer: refused by name for a remote job.
  jsonl +=
      R"({"custom_id":"ids","method":"POST","url":"/v1/completions","body":{"model":"any","prompt":[1,2,3]}})"
      "\n";
  const std::string input = write_input_jsonl(dir_, jsonl);
  ServeProcess server;
  const auto remote = run_process(
      generate_args({"--endpoint", server.url(), "--input", input, "--on-bad-row", "skip",
                     "--export", "openai-batch", "--output", dir_ + "/remote.jsonl"}));
  EXPECT_EQ(remote.exit_code, 3) << remote.err;  // the token-id line was skipped
  EXPECT_THAT(remote.err,
              HasSubstr("input.jsonl:7: a 'prompt' of token ids needs the model's tokenizer"));
  const auto local =
      run_process(generate_args({"--model", model_, "--input", input, "--export", "openai-batch",
                                 "--output", dir_ + "/local.jsonl", "--quiet"}));
  ASSERT_EQ(local.exit_code, 0) << local.err;
  const auto remote_rows = read_jsonl(dir_ + "/remote.jsonl");
  const auto local_rows = read_jsonl(dir_ + "/local.jsonl");
  ASSERT_EQ(remote_rows.size(), 7u);
  ASSERT_EQ(local_rows.size(), 7u);
  for (size_t i = 0; i < 6; ++i) {
    const auto& r = remote_rows[i]["response"]["body"]["choices"][0];
    const auto& l = local_rows[i]["response"]["body"]["choices"][0];
    EXPECT_EQ(remote_rows[i]["custom_id"], local_rows[i]["custom_id"]);
    EXPECT_EQ(r.contains("message") ? r["message"]["content"] : r["text"],
              l.contains("message") ? l["message"]["content"] : l["text"])
        << i;
    EXPECT_EQ(r["finish_reason"], l["finish_reason"]) << i;
  }
  EXPECT_TRUE(remote_rows[6]["response"].is_null());
}

TEST_F(RemoteCli, RemoteOptionsThatCannotWorkAreUsageErrors) {
  const std::string input = write_rows(dir_, 1);
  const auto with_model =
      run_process(generate_args({"--endpoint", "http://127.0.0.1:1/v1", "--model", model_,
                                 "--input", input, "--output", dir_ + "/o.jsonl"}));
  EXPECT_EQ(with_model.exit_code, 2);
  EXPECT_THAT(with_model.err, HasSubstr("--model does not go with --endpoint"));
  const auto no_endpoint = run_process(generate_args(
      {"--model", model_, "--concurrency", "8", "--input", input, "--output", dir_ + "/o.jsonl"}));
  EXPECT_EQ(no_endpoint.exit_code, 2);
  EXPECT_THAT(no_endpoint.err, HasSubstr("--concurrency needs --endpoint"));
  const auto bad_url = run_process(
      generate_args({"--endpoint", "gpu1:8000", "--input", input, "--output", dir_ + "/o.jsonl"}));
  EXPECT_EQ(bad_url.exit_code, 2);
  EXPECT_THAT(bad_url.err, HasSubstr("must start with http:// or https://"));
}

}  // namespace
}  // namespace sluice::test
