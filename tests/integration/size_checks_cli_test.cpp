// `sluice generate` refuses sizes the machine cannot hold before spending memory on them, with
// a message naming the option.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

const char* kGgufF32 = "models/stories260K/gguf/stories260K-f32.gguf";

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
