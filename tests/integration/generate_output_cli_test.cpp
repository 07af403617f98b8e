// `sluice generate`'s output: problems with it are found before the model loads, not after hours
// of generation, and rows an export leaves out are counted with their reason (exit 3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Returns the names of the files in dir, sorted.
std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The model path names no file: an error about the output proves it was checked first.
TEST(GenerateOutputCli, UnwritableOutputIsFoundBeforeTheModelLoads) {
  const std::string dir = make_temp_dir("gen-output");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"a\"}\n");
  write_file(dir + "/plain-file", "");
  struct Case {
    std::string output;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {dir + "/no-such-dir/out.jsonl", "No such file or directory"},
      {dir, "is a directory"},
      {dir + "/plain-file/out.jsonl", "Not a directory"},
  };
  for (const Case& c : cases) {
    for (const bool is_export : {false, true}) {
      SCOPED_TRACE(c.output + (is_export ? " (export)" : ""));
      std::vector<std::string> args = {
          "generate", "--model", dir + "/no-model.gguf", "--input", dir + "/input.jsonl",
          "--output", c.output};
      if (is_export) args.insert(args.end(), {"--export", "alpaca"});
      const auto r = run_sluice(args);
      EXPECT_EQ(r.exit_code, 1) << r.err;
      EXPECT_THAT(r.err, HasSubstr(c.output));
      EXPECT_THAT(r.err, HasSubstr(c.reason));
      EXPECT_THAT(r.err, Not(HasSubstr("no-model")));
      // Nothing left behind: no temporary output, no job file.
      EXPECT_EQ(files_in(dir), (std::vector<std::string>{"input.jsonl", "plain-file"}));
    }
  }
}

TEST(GenerateOutputCli, ReadOnlyOutputDirectoryIsFoundBeforeTheModelLoads) {
  const std::string dir = make_temp_dir("gen-output-ro");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"a\"}\n");
  std::filesystem::create_directory(dir + "/ro");
  ASSERT_EQ(::chmod((dir + "/ro").c_str(), 0555), 0);
  std::vector<std::string> args = {SLUICE_EXECUTABLE, "generate", "--model",
                                   dir + "/no-model.gguf", "--input", dir + "/input.jsonl",
                                   "--output", dir + "/ro/out.jsonl"};
  if (::geteuid() == 0) {
    // Root writes into read-only directories: run as nobody (CI runs as root).
    ASSERT_EQ(::chmod(dir.c_str(), 0755), 0);
    args.insert(args.begin(), {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"});
  }
  const auto r = run_process(args, {"QT_QPA_PLATFORM=offscreen"});
  ::chmod((dir + "/ro").c_str(), 0755);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(dir + "/ro/out.jsonl"));
  EXPECT_THAT(r.err, HasSubstr("Permission denied"));
  EXPECT_TRUE(files_in(dir + "/ro").empty());
}

// Greedy decoding gives every row two identical samples: no row makes a pair, and the run says
// so and how many, instead of writing an empty file and exiting 0.
TEST(GenerateOutputCli, DpoExportSaysHowManyRowsItLeftOutAndWhy) {
  const std::string dir = make_temp_dir("gen-dpo");
  write_file(dir + "/input.jsonl",
             "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The cat\"}\n");
  const auto r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", dir + "/input.jsonl",
                  "--output", dir + "/pairs.jsonl", "--export", "dpo", "--n", "2", "--temperature",
                  "0", "--max-tokens", "8", "--quiet"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("2 rows left out: 2 with identical chosen and rejected outputs"));
  EXPECT_EQ(read_file(dir + "/pairs.jsonl"), "");
}

// One sample per prompt can never make a pair: refused before the model loads.
TEST(GenerateOutputCli, DpoExportWithOneSampleIsAUsageError) {
  const std::string dir = make_temp_dir("gen-dpo-n1");
  write_file(dir + "/input.jsonl", "{\"prompt\": \"Once upon a time\"}\n");
  const auto r =
      run_sluice({"generate", "--model", shared_path(kGgufF32), "--input", dir + "/input.jsonl",
                  "--output", dir + "/pairs.jsonl", "--export", "dpo", "--quiet"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--n 2"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/pairs.jsonl"));
}

}  // namespace
}  // namespace sluice::test
