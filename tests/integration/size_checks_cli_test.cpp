// `sluice generate` refuses sizes the machine or the context cannot hold before spending
// memory on them, with a message naming the option or the row.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

// A 4 MB prompt against a 512-token context fails its own row before it is tokenized (the same
// row status and finish reason as a prompt the engine rejects); the other row runs.
TEST(SizeChecksCli, PromptTooLongForTheContextFailsItsRowUntokenized) {
  const std::string dir = make_temp_dir("size-prompt");
  std::string prompt;
  while (prompt.size() < (size_t{4} << 20)) prompt += "Once upon a time there was a girl. ";
  const auto r = run_sluice(
      {"generate", "--model", shared_path(kGgufF32), "--input",
       write_input_jsonl(dir, "{\"prompt\": \"Once\"}\n{\"prompt\": \"" + prompt + "\"}\n"),
       "--output", dir + "/out.jsonl", "--max-tokens", "4", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("input.jsonl:2"));
  EXPECT_THAT(r.err, HasSubstr("refused without tokenizing"));
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["finish_reason"], "length");
  EXPECT_EQ(rows[1]["finish_reason"], "error");
  EXPECT_EQ(rows[1]["status"], "failed");
  EXPECT_THAT(rows[1]["error"].get<std::string>(), HasSubstr("max_model_len is 512"));
}

TEST(SizeChecksCli, KvCacheBytesPastTheMachinesMemoryIsAUsageError) {
  const std::string dir = make_temp_dir("size-kv-bytes");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input_jsonl(dir, "{\"prompt\": \"a\"}\n"), "--output",
                             dir + "/out.jsonl", "--kv-cache-bytes", "100T"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--kv-cache-bytes 100T"));
  EXPECT_THAT(r.err, HasSubstr("available"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl.sluicejob"));
}

TEST(SizeChecksCli, KvBlocksPastTheMachinesMemoryIsRefusedNamingTheOption) {
  const std::string dir = make_temp_dir("size-kv-blocks");
  const auto r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                             write_input_jsonl(dir, "{\"prompt\": \"a\"}\n"), "--output",
                             dir + "/out.jsonl", "--kv-blocks", "1073741824"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--kv-blocks 1073741824"));
  EXPECT_THAT(r.err, HasSubstr("available"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.jsonl.sluicejob"));
}

}  // namespace
}  // namespace sluice::test
