// Pairs picked in the app's Pairs view steer `sluice jobs export --format dpo`: a real n = 2 job
// from `generate`, picks stored in its job file as the app stores them (PairPickStore), then the
// export: the picked row follows its pick, the unusable row is left out, the rest keep the rule,
// and the summary says which; --reviewed-only leaves the unreviewed row out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/jobs/job_store.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(DpoPicksCli, ExportFollowsTheReviewPicks) {
  const std::string dir = make_temp_dir("dpo-picks");
  write_file(dir + "/input.jsonl",
             "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The cat\"}\n"
             "{\"prompt\": \"A dog\"}\n");
  const std::string job = dir + "/run.sluicejob";
  const auto generated = run_sluice(
      {"generate", "--model", shared_path("models/stories260K/gguf/stories260K-f32.gguf"),
       "--input", dir + "/input.jsonl", "--job", job, "--n", "2", "--temperature", "1.0", "--seed",
       "7", "--max-tokens", "24", "--quiet"});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;

  std::string picked_chosen;
  std::string picked_rejected;
  std::string rule_prompt;
  {
    const auto store = JobStore::open(job);
    const auto row0 = store->result(0);
    ASSERT_TRUE(row0 && row0->samples.size() == 2u);
    picked_chosen = row0->samples[1].output;
    picked_rejected = row0->samples[0].output;
    rule_prompt = store->result(2)->prompt;
    const auto picks = PairPickStore::open(job);
    PairPick pick;
    pick.row_index = 0;
    pick.chosen_sample_idx = 1;
    pick.rejected_sample_idx = 0;
    picks->set(pick);
    pick.row_index = 1;
    pick.is_unusable = true;
    picks->set(pick);
  }

  const std::string out = dir + "/pairs.jsonl";
  const auto exported = run_sluice({"jobs", "export", job, "--format", "dpo", "--output", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("1 marked unusable in review"));
  EXPECT_THAT(exported.err,
              HasSubstr("dpo pairs: 1 pair from review picks, 1 by the longest rule"));
  const auto records = read_jsonl(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0]["chosen"], picked_chosen);
  EXPECT_EQ(records[0]["rejected"], picked_rejected);
  EXPECT_EQ(records[1]["prompt"], rule_prompt);

  // --reviewed-only: the row left to the rule is left out too, and said so.
  const auto reviewed =
      run_sluice({"jobs", "export", job, "--format", "dpo", "--output", out, "--reviewed-only"});
  ASSERT_EQ(reviewed.exit_code, 0) << reviewed.err;
  EXPECT_THAT(reviewed.err, HasSubstr("1 not reviewed"));
  EXPECT_THAT(reviewed.err, HasSubstr("dpo pairs: 1 pair from review picks, 0 by the longest "
                                      "rule (reviewed rows only), 0 of them ties"));
  const auto reviewed_records = read_jsonl(out);
  ASSERT_EQ(reviewed_records.size(), 1u);
  EXPECT_EQ(reviewed_records[0]["chosen"], picked_chosen);
  // Only dpo has reviews to go by.
  const auto not_dpo = run_sluice({"jobs", "export", job, "--format", "jsonl", "--output",
                                   dir + "/all.jsonl", "--reviewed-only"});
  EXPECT_EQ(not_dpo.exit_code, 2);
  EXPECT_THAT(not_dpo.err, HasSubstr("--reviewed-only needs --format dpo"));
}

}  // namespace
}  // namespace sluice::test
