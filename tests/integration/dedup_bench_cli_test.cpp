// `sluice bench dedup`: the table at two thread counts over a small synthetic set (every planted
// copy found, the same counts at 1 and 2 threads), and usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(DedupBenchCli, PrintsOneRowPerThreadCount) {
  const auto run = run_sluice(
      {"bench", "dedup", "--rows", "2000", "--words", "200", "--planted", "25", "--threads", "1,2"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  // | rows | words | threads | ... | candidates | exact found | near found | recall | precision |
  EXPECT_THAT(run.out, HasSubstr("| 2000 | 200 | 1 |"));
  EXPECT_THAT(run.out, HasSubstr("| 2000 | 200 | 2 |"));
  size_t rows_with_all_found = 0;
  for (size_t at = run.out.find("| 25/25 | 25/25 | 1.0000 | 1.0000 |"); at != std::string::npos;
       at = run.out.find("| 25/25 | 25/25 | 1.0000 | 1.0000 |", at + 1))
    ++rows_with_all_found;
  EXPECT_EQ(rows_with_all_found, 2u) << run.out;
  EXPECT_THAT(run.out, HasSubstr("18 bands of 7 rows"));
}

TEST(DedupBenchCli, RefusesImpossibleOptions) {
  const auto too_many = run_sluice({"bench", "dedup", "--rows", "100", "--planted", "30"});
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_THAT(too_many.err, HasSubstr("--planted 30 needs at least 120 rows"));
  const auto threads = run_sluice({"bench", "dedup", "--threads", "0"});
  EXPECT_EQ(threads.exit_code, 2);
  EXPECT_THAT(threads.err, HasSubstr("--threads"));
}

}  // namespace
}  // namespace sluice::test
