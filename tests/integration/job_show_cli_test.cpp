// Issue 27: `jobs show` right after a kill -9 was misleading: it said nothing of the run that had
// died, and its "0 done" did not match the rows `--resume` then found in the job. A real
// `sluice generate` is killed mid-run: `jobs show` names the dead run and reports as finished
// exactly the rows the resume finds already in the job; after the resume it says "finished".
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <regex>
#include <thread>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kShownJobRows = 1500;

// Returns the integer the first group of pattern captures in text, or -1.
int64_t captured_count(const std::string& text, const std::string& pattern) {
  std::smatch match;
  if (!std::regex_search(text, match, std::regex(pattern))) return -1;
  return std::stoll(match[1]);
}

TEST(JobShowCli, AfterAKillTheShownRowsAreThoseTheResumeFindsAndTheDeadRunIsNamed) {
  const std::string dir = make_temp_dir("job-show-kill");
  std::string jsonl;
  for (int64_t i = 0; i < kShownJobRows; ++i)
    jsonl +=
        nlohmann::json{{"id", i}, {"prompt", "The cat number " + std::to_string(i)}}.dump() + "\n";
  const std::string input = write_input_jsonl(dir, jsonl);
  const std::string job = dir + "/run.sluicejob";
  {
    BackgroundProcess run({SLUICE_EXECUTABLE, "generate", "--model", shared_path(kGgufF32),
                           "--input", input, "--job", job, "--max-tokens", "16", "--threads", "1",
                           "--max-num-seqs", "4", "--quiet"});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
    while (run.is_running() && committed_rows(job) < 64 &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(run.is_running()) << "the run finished before it could be killed";
    EXPECT_EQ(run.kill_now(), 128 + SIGKILL);
  }
  const auto shown = run_sluice({"jobs", "show", job});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const int64_t shown_finished = captured_count(shown.out, "rows: (\\d+) rows finished");
  EXPECT_GE(shown_finished, 64) << shown.out;
  EXPECT_THAT(shown.out, HasSubstr("state: stopped mid-run: process "));
  EXPECT_THAT(shown.out, HasSubstr("killed or crashed"));
  EXPECT_THAT(shown.out, HasSubstr("--resume " + job));

  const auto resumed =
      run_sluice({"generate", "--resume", job, "--threads", "1", "--output", dir + "/out.jsonl"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(captured_count(resumed.err, "(\\d+) already in the job"), shown_finished)
      << resumed.err << shown.out;
  const auto after = run_sluice({"jobs", "show", job});
  EXPECT_THAT(after.out, HasSubstr(std::to_string(kShownJobRows) + " of " +
                                   std::to_string(kShownJobRows) + " rows finished"));
  EXPECT_THAT(after.out, HasSubstr("state: finished"));
}

}  // namespace
}  // namespace sluice::test
