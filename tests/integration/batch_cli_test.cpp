// `sluice generate` on an OpenAI Batch input file, written back in the Batch output format: each
// line runs with its own prompt and parameters, a refused line is an error line, never lost.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

const char* kBatchLines[] = {
    R"({"custom_id": "chat-short", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "stories", "messages": [{"role": "user", "content": "Once upon a time"}], "max_tokens": 3}})",
    R"({"custom_id": "text-greedy", "method": "POST", "url": "/v1/completions", "body": {"model": "stories", "prompt": "Lily went to the park", "max_tokens": 12, "temperature": 0}})",
    R"({"custom_id": "chat-two", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "stories", "messages": [{"role": "user", "content": "Tom had a dog"}], "max_completion_tokens": 8, "n": 2, "temperature": 1.0, "seed": 7}})",
    R"({"custom_id": "embed", "method": "POST", "url": "/v1/embeddings", "body": {"model": "stories", "input": "hello"}})",
    R"({"custom_id": "text-stop", "method": "POST", "url": "/v1/completions", "body": {"model": "stories", "prompt": "The sun", "max_tokens": 5, "seed": 3}})",
    R"({"custom_id": "chat-system", "method": "POST", "url": "/v1/chat/completions", "body": {"model": "stories", "messages": [{"role": "system", "content": "Be short."}, {"role": "user", "content": "A cat"}], "max_tokens": 6}})",
};

std::string write_batch(const std::string& dir) {
  std::string text;
  for (const char* line : kBatchLines) text += std::string(line) + "\n";
  write_file(dir + "/batch.jsonl", text);
  return dir + "/batch.jsonl";
}

ProcessResult check_output(const std::string& input, const std::string& output) {
  return run_process({"/usr/bin/python3", source_dir() + "/tests/integration/check_batch_output.py",
                      input, output});
}

TEST(BatchCli, BatchFileRunsAndWritesTheBatchOutputFormat) {
  const std::string dir = make_temp_dir("batch-cli");
  const std::string input = write_batch(dir);
  const std::string output = dir + "/out.jsonl";
  const std::string job = dir + "/batch.sluicejob";
  const ProcessResult r = run_sluice(
      {"generate", "--model", shared_path(kGgufF32), "--input", input, "--export", "openai-batch",
       "--output", output, "--on-bad-row", "skip", "--max-tokens", "40", "--job", job, "--quiet"});
  ASSERT_EQ(r.exit_code, 3) << r.err;  // the embeddings line is skipped
  EXPECT_THAT(r.err, HasSubstr("batch.jsonl:4: batch line 'embed': url \"/v1/embeddings\""));
  const ProcessResult check = check_output(input, output);
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  const auto summary = nlohmann::json::parse(check.out);
  EXPECT_EQ(summary["answered"], 5);
  EXPECT_LE(summary["completion_tokens"]["chat-short"].get<int>(), 3);
  // Greedy, no stop: the line's own max_tokens, not the command line's 40.
  EXPECT_EQ(summary["completion_tokens"]["text-greedy"], 12);
  EXPECT_LE(summary["completion_tokens"]["chat-two"].get<int>(), 16);

  // The job keeps every line's custom_id: `jobs export` writes the same file.
  const std::string again = dir + "/again.jsonl";
  const ProcessResult exported =
      run_sluice({"jobs", "export", job, "--format", "openai-batch", "--output", again});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_EQ(read_jsonl(again), read_jsonl(output));
}

TEST(BatchCli, ForcedFormatNamesWhatAPlainLineLacks) {
  const std::string dir = make_temp_dir("batch-cli-forced");
  const std::string input = write_input_jsonl(dir, "{\"prompt\": \"Once\"}\n");
  const ProcessResult r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input, "--format",
                  "openai-batch", "--output", dir + "/out.jsonl", "--quiet"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:1: a batch line needs a non-empty string 'custom_id'"));
}

}  // namespace
}  // namespace sluice::test
