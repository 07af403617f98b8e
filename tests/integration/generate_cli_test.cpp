// `sluice generate` end to end on the stories260K files in ../shared.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"
#include "tests/support/reference_data.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

std::string write_input(const std::string& dir, const std::string& jsonl) {
  write_file(dir + "/input.jsonl", jsonl);
  return dir + "/input.jsonl";
}

// The acceptance run: the reference story, byte for byte.
TEST(GenerateCli, WritesTheReferenceStory) {
  const std::string dir = make_temp_dir("gen-ref");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input(dir, "{\"prompt\": \"Once upon a time\"}\n"), "--output",
                             dir + "/out.jsonl", "--max-tokens", "252", "--token-ids"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["output"].get<std::string>(),
            read_file(shared_path("models/stories260K/expected/generated_n256.txt")));
  EXPECT_EQ(rows[0]["output_token_ids"].get<std::vector<int32_t>>(), reference_generated_ids());
  EXPECT_EQ(rows[0]["prompt_tokens"], 5);
  EXPECT_EQ(rows[0]["output_tokens"], 252);
  EXPECT_EQ(rows[0]["finish_reason"], "length");
  EXPECT_EQ(rows[0]["id"], 0);  // no id in the input: the row index
  EXPECT_TRUE(rows[0]["timings"].contains("ttft_ms"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl.partial"));
}

// Every file form through the CLI: F32 and F16 forms give all 252 reference ids, BF16 and Q8_0
// the first 60 (their own rounding makes later tokens legitimately differ).
TEST(GenerateCli, EveryModelFormReproducesTheReferenceIds) {
  const auto expected = reference_generated_ids();
  for (const auto& form : stories260k_forms()) {
    SCOPED_TRACE(form.name);
    const std::string dir = make_temp_dir("gen-forms");
    const size_t n = form.exact_greedy_256 ? expected.size() : 60;
    const auto r = run_sluice(
        {"generate", "--model", shared_path(form.path), "--input",
         write_input(dir, "{\"prompt\": \"Once upon a time\", \"id\": \"a\"}\n"), "--output",
         dir + "/out.jsonl", "--max-tokens", std::to_string(n), "--token-ids", "--quiet"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto rows = read_jsonl(dir + "/out.jsonl");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["id"], "a");
    EXPECT_EQ(rows[0]["output_token_ids"].get<std::vector<int32_t>>(),
              std::vector<int32_t>(expected.begin(), expected.begin() + static_cast<long>(n)));
  }
}

// An empty prompt is BOS alone; with run.c's 256 positions this is run.c's own output.
TEST(GenerateCli, EmptyPromptMatchesRunCWithoutPrompt) {
  const std::string dir = make_temp_dir("gen-empty");
  const auto r =
      run_sluice({"generate", "--model", shared_path("models/stories260K/llama2c/stories260K.bin"),
                  "--input", write_input(dir, "{\"prompt\": \"\"}\n"), "--output",
                  dir + "/out.jsonl", "--max-tokens", "256", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  EXPECT_EQ(rows[0]["prompt_tokens"], 1);
  // run.c ends its output with a newline of its own.
  EXPECT_EQ(rows[0]["output"].get<std::string>() + "\n",
            read_file(shared_path("models/stories260K/expected/runc/noprompt_t0_n256.txt")));
}

TEST(GenerateCli, MalformedJsonlLineIsNamed) {
  const std::string dir = make_temp_dir("gen-bad");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input(dir, "{\"prompt\": \"a\"}\n{\"prompt\": \"b\"\n"),
                             "--output", dir + "/out.jsonl"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:2"));
  EXPECT_THAT(r.err, HasSubstr("malformed JSON"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl"));
}

TEST(GenerateCli, EmptyInputFileIsAnError) {
  const std::string dir = make_temp_dir("gen-emptyfile");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input(dir, ""), "--output", dir + "/out.jsonl"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("empty"));
}

TEST(GenerateCli, InvalidUtf8IsNamed) {
  const std::string dir = make_temp_dir("gen-utf8");
  const auto r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                  write_input(dir, "{\"prompt\": \"ok\"}\n{\"prompt\": \"bad \xff\xfe\"}\n"),
                  "--output", dir + "/out.jsonl"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:2"));
}

// A prompt longer than the context fails its own row with a clear error; the others finish.
TEST(GenerateCli, PromptLongerThanContextFailsOnlyItsRow) {
  const std::string dir = make_temp_dir("gen-long");
  const auto r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                  write_input(dir,
                              "{\"prompt\": \"Once\"}\n{\"prompt\": \"Once upon a time there was a "
                              "little girl named Lily who liked to play\"}\n"),
                  "--output", dir + "/out.jsonl", "--max-model-len", "8", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:2"));
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["finish_reason"], "length");
  EXPECT_EQ(rows[1]["finish_reason"], "error");
  EXPECT_THAT(rows[1]["error"].get<std::string>(), HasSubstr("8"));
}

// --on-long-prompt skip records the long row as skipped; truncate runs it on its last tokens.
TEST(GenerateCli, OnLongPromptSkipsOrTruncatesTheRow) {
  const std::string dir = make_temp_dir("gen-long-policy");
  const std::string input = write_input(
      dir,
      "{\"prompt\": \"Once\"}\n{\"prompt\": \"Once upon a time there was a little girl named "
      "Lily who liked to play\"}\n");
  const auto run = [&](const std::string& policy) {
    return run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input, "--output",
                       dir + "/" + policy + ".jsonl", "--max-model-len", "8", "--max-tokens", "3",
                       "--on-long-prompt", policy, "--quiet"});
  };
  const auto skipped = run("skip");
  EXPECT_EQ(skipped.exit_code, 3) << skipped.err;
  const auto skip_rows = read_jsonl(dir + "/skip.jsonl");
  ASSERT_EQ(skip_rows.size(), 2u);
  EXPECT_EQ(skip_rows[1]["status"], "skipped");
  EXPECT_THAT(skip_rows[1]["error"].get<std::string>(), HasSubstr("does not fit the context of 8"));
  const auto truncated = run("truncate");
  EXPECT_EQ(truncated.exit_code, 0) << truncated.err;
  const auto truncate_rows = read_jsonl(dir + "/truncate.jsonl");
  ASSERT_EQ(truncate_rows.size(), 2u);
  EXPECT_FALSE(truncate_rows[1].contains("status"));
  EXPECT_EQ(truncate_rows[1]["prompt_tokens"], 5);  // max(8 / 2, 8 - 3) tokens kept
  const auto bad = run("ignore");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--on-long-prompt must be fail, skip or truncate, not 'ignore'"));
}

// Generation that would run past the context ends with "length" at the context's edge.
TEST(GenerateCli, RunningIntoTheContextEndsWithLength) {
  const std::string dir = make_temp_dir("gen-ctx");
  const auto r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                  write_input(dir, "{\"prompt\": \"Once upon a time\"}\n"), "--output",
                  dir + "/out.jsonl", "--max-tokens", "1000", "--max-model-len", "40", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  EXPECT_EQ(rows[0]["finish_reason"], "length");
  EXPECT_EQ(rows[0]["output_tokens"], 40 - 5);
}

TEST(GenerateCli, StopStringEndsTheOutputBeforeIt) {
  const std::string dir = make_temp_dir("gen-stop");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input(dir, "{\"prompt\": \"Once upon a time\"}\n"), "--output",
                             dir + "/out.jsonl", "--stop", "park", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  EXPECT_EQ(rows[0]["finish_reason"], "stop");
  EXPECT_EQ(rows[0]["output"],
            ", there was a little girl named Lily. She loved to play outside in the ");
}

TEST(GenerateCli, MissingTokenizerIsReported) {
  const std::string dir = make_temp_dir("gen-notok");
  std::filesystem::copy_file(shared_path("models/stories260K/llama2c/stories260K.bin"),
                             dir + "/m.bin");
  const auto r =
      run_sluice({"generate", "--model", dir + "/m.bin", "--input",
                  write_input(dir, "{\"prompt\": \"a\"}\n"), "--output", dir + "/out.jsonl"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no tokenizer"));
}

// No machine has a hundred GPUs: with or without CUDA the start is refused with the device named,
// before a job file is made, so nothing is left to resume or remove.
TEST(GenerateCli, UnavailableDeviceIsRefusedBeforeTheJobFile) {
  const std::string dir = make_temp_dir("gen-device");
  const std::string input = write_input(dir, "{\"prompt\": \"a\"}\n");
  for (const char* device : {"cuda:99", "tpu"}) {
    const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                               "--output", dir + "/out.jsonl", "--device", device});
    EXPECT_EQ(r.exit_code, 1) << device;
    EXPECT_THAT(r.err, HasSubstr(device));
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl")) << device;
    EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl.sluicejob")) << device;
  }
}

// An FP8 KV cache is a GPU option: on the CPU the run is refused, saying so, before a job file is
// made; a type the engine does not know is a usage error.
TEST(GenerateCli, AnFp8KvCacheOnTheCpuIsRefusedBeforeTheJobFile) {
  const std::string dir = make_temp_dir("gen-kv-fp8");
  const std::string input = write_input(dir, "{\"prompt\": \"a\"}\n");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                             "--output", dir + "/out.jsonl", "--kv-cache-dtype", "fp8"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("FP8 KV cache needs a CUDA device"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl.sluicejob"));
  const auto bad = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                               "--output", dir + "/out.jsonl", "--kv-cache-dtype", "fp4"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--kv-cache-dtype must be auto or fp8"));
}

// Expert offload's flags: a count that is not one, or both flags at once, are usage errors; on the
// CPU (a dense model here) the run goes on, the option unused.
TEST(GenerateCli, CpuMoeFlagsAreCheckedAndUnusedOnTheCpu) {
  const std::string dir = make_temp_dir("gen-cpu-moe");
  const std::string input = write_input(dir, "{\"prompt\": \"a\"}\n");
  const auto negative = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                                    "--output", dir + "/out.jsonl", "--n-cpu-moe", "-1"});
  EXPECT_EQ(negative.exit_code, 2);
  EXPECT_THAT(negative.err, HasSubstr("n-cpu-moe"));
  const auto both = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                                "--output", dir + "/out.jsonl", "--cpu-moe", "--n-cpu-moe", "2"});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_THAT(both.err, HasSubstr("give --cpu-moe or --n-cpu-moe, not both"));
  const auto ok = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", input,
                              "--output", dir + "/out.jsonl", "--cpu-moe", "--max-tokens", "2"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

TEST(GenerateCli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_sluice({"generate", "--input", "x"}).exit_code, 2);
  const auto r = run_sluice(
      {"generate", "--model", "m", "--input", "i", "--output", "o", "--temperature", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("temperature"));
}

}  // namespace
}  // namespace sluice::test

namespace sluice::test {
namespace {

// --n 3 with sampling: three samples per row, each its own output, reproducible run to run.
TEST(GenerateCli, SamplesPerRowWithN) {
  const std::string dir = make_temp_dir("gen-n");
  write_file(dir + "/input.jsonl",
             "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The cat\"}\n");
  const std::vector<std::string> args = {"generate",
                                         "--model",
                                         shared_path(kGgufF32),
                                         "--input",
                                         dir + "/input.jsonl",
                                         "--output",
                                         dir + "/out.jsonl",
                                         "--n",
                                         "3",
                                         "--temperature",
                                         "1.0",
                                         "--seed",
                                         "11",
                                         "--max-tokens",
                                         "24",
                                         "--quiet"};
  ASSERT_EQ(run_sluice(args).exit_code, 0);
  const auto first = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(run_sluice(args).exit_code, 0);
  const auto second = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(first.size(), 2u);
  for (const auto& row : first) {
    ASSERT_EQ(row["samples"].size(), 3u);
    EXPECT_NE(row["samples"][0]["output"], row["samples"][1]["output"]);
  }
  for (size_t i = 0; i < first.size(); ++i)
    EXPECT_EQ(first[i]["samples"], second[i]["samples"]);  // timings differ
}

}  // namespace
}  // namespace sluice::test
