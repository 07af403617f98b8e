#include "engine/export/export_dpo.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::make_sample;

RowResult row_with_samples(int64_t row_index, std::vector<SampleResult> samples) {
  RowResult row;
  row.row_index = row_index;
  row.prompt = "prompt " + std::to_string(row_index);
  row.samples = std::move(samples);
  return row;
}

SampleResult scored(std::string output, Json score) {
  SampleResult sample = make_sample(std::move(output), 1);
  sample.extra = {{"score", std::move(score)}};
  return sample;
}

ExportOptions with_rule(DpoRule rule) {
  ExportOptions options;
  options.dpo_rule = rule;
  return options;
}

// Chosen and rejected of a two-sample row whose answers are known by construction: sample 0 is
// short, sample 1 long.
TEST(DpoPair, EachRuleOnTwoSamples) {
  const RowResult row =
      row_with_samples(0, {make_sample("short", 1), make_sample("a much longer answer", 4)});
  const auto pick = [&](DpoRule rule) {
    const auto pair = choose_dpo_pair(row, with_rule(rule));
    EXPECT_TRUE(pair.has_value());
    return pair ? std::make_pair(pair->chosen_sample_idx, pair->rejected_sample_idx)
                : std::make_pair(size_t{99}, size_t{99});
  };
  EXPECT_EQ(pick(DpoRule::Longest), std::make_pair(size_t{1}, size_t{0}));
  EXPECT_EQ(pick(DpoRule::Shortest), std::make_pair(size_t{0}, size_t{1}));
  EXPECT_EQ(pick(DpoRule::FirstChosen), std::make_pair(size_t{0}, size_t{1}));
  EXPECT_EQ(pick(DpoRule::LastChosen), std::make_pair(size_t{1}, size_t{0}));
}

TEST(DpoPair, LengthCountsCharactersNotBytes) {
  // "日本語です" is 5 characters in 15 bytes; "abcdefg" is 7 characters.
  const RowResult row =
      row_with_samples(0, {make_sample("日本語です", 3), make_sample("abcdefg", 2)});
  const auto pair = choose_dpo_pair(row, with_rule(DpoRule::Longest));
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->chosen_sample_idx, 1u);
  EXPECT_EQ(pair->rejected_sample_idx, 0u);
}

TEST(DpoPair, TiesGoByIndex) {
  // Equal lengths: chosen is the lowest index, rejected the highest.
  const RowResult row =
      row_with_samples(0, {make_sample("aaa", 1), make_sample("bbb", 1), make_sample("ccc", 1)});
  for (const DpoRule rule : {DpoRule::Longest, DpoRule::Shortest}) {
    const auto pair = choose_dpo_pair(row, with_rule(rule));
    ASSERT_TRUE(pair);
    EXPECT_EQ(pair->chosen_sample_idx, 0u);
    EXPECT_EQ(pair->rejected_sample_idx, 2u);
  }
  // Lengths 4, 4, 1, 1: longest picks sample 0 over 1, rejects sample 3 over 2.
  const RowResult mixed = row_with_samples(0, {make_sample("xxxx", 1), make_sample("yyyy", 1),
                                               make_sample("z", 1), make_sample("w", 1)});
  const auto pair = choose_dpo_pair(mixed, with_rule(DpoRule::Longest));
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->chosen_sample_idx, 0u);
  EXPECT_EQ(pair->rejected_sample_idx, 3u);
}

TEST(DpoPair, ScoreRuleChoosesTheHighestScore) {
  const RowResult row = row_with_samples(
      0, {scored("mid", 0.5), scored("best", 2), scored("worst", -1.25), make_sample("none", 1)});
  const auto pair = choose_dpo_pair(row, with_rule(DpoRule::Score));
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->chosen_sample_idx, 1u);
  EXPECT_EQ(pair->rejected_sample_idx, 2u);

  // Another field name, and samples without a score take no part.
  ExportOptions options = with_rule(DpoRule::Score);
  options.score_field = "reward";
  SampleResult a = make_sample("a", 1);
  a.extra = {{"reward", 1}};
  SampleResult b = make_sample("b", 1);
  b.extra = {{"reward", 3}};
  const auto reward_pair = choose_dpo_pair(row_with_samples(0, {a, scored("c", 100), b}), options);
  ASSERT_TRUE(reward_pair);
  EXPECT_EQ(reward_pair->chosen_sample_idx, 2u);
  EXPECT_EQ(reward_pair->rejected_sample_idx, 0u);
}

TEST(DpoPair, NonNumericScoreNamesRowAndSample) {
  const RowResult row = row_with_samples(7, {scored("a", 1), scored("b", "high")});
  try {
    choose_dpo_pair(row, with_rule(DpoRule::Score));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("row 7"), std::string::npos) << message;
    EXPECT_NE(message.find("sample 1"), std::string::npos) << message;
    EXPECT_NE(message.find("score"), std::string::npos) << message;
  }
}

TEST(DpoPair, RowsWithoutTwoUsableSamplesGiveNoPair) {
  EXPECT_FALSE(choose_dpo_pair(row_with_samples(0, {make_sample("only", 1)}), {}));
  EXPECT_FALSE(choose_dpo_pair(row_with_samples(0, {}), {}));
  // An aborted or failed sample is not training data.
  EXPECT_FALSE(choose_dpo_pair(
      row_with_samples(0, {make_sample("ok", 1), make_sample("broken", 1, "error")}), {}));
  EXPECT_FALSE(choose_dpo_pair(
      row_with_samples(0, {make_sample("ok", 1), make_sample("stopped", 1, "abort")}), {}));
  // Identical outputs carry no preference.
  EXPECT_FALSE(
      choose_dpo_pair(row_with_samples(0, {make_sample("same", 1), make_sample("same", 1)}), {}));
  // Score rule: only one sample has a score.
  EXPECT_FALSE(choose_dpo_pair(row_with_samples(0, {scored("a", 1), make_sample("b", 1)}),
                               with_rule(DpoRule::Score)));
}

TEST(DpoPair, SaysWhyThereIsNoPair) {
  std::string why;
  EXPECT_FALSE(choose_dpo_pair(row_with_samples(0, {make_sample("only", 1)}), {}, &why));
  EXPECT_EQ(why, "with fewer than two successful samples");
  EXPECT_FALSE(choose_dpo_pair(
      row_with_samples(0, {make_sample("same", 1), make_sample("same", 1)}), {}, &why));
  EXPECT_EQ(why, "with identical chosen and rejected outputs");
  EXPECT_FALSE(choose_dpo_pair(row_with_samples(0, {scored("a", 1), make_sample("b", 1)}),
                               with_rule(DpoRule::Score), &why));
  EXPECT_EQ(why, "with fewer than two successful samples with a score");
}

std::vector<Json> read_dpo_jsonl(const std::string& path) {
  std::vector<Json> records;
  std::istringstream in(test::read_file(path));
  std::string line;
  while (std::getline(in, line)) records.push_back(Json::parse(line));
  return records;
}

TEST(DpoExport, WritesPairsAndCountsSkippedRows) {
  const std::string dir = test::make_temp_dir("export-dpo");
  const auto store = JobStore::create(dir + "/job.sluicejob", test::make_job_info(2));
  store->add_result(row_with_samples(0, {make_sample("tiny", 1), make_sample("longer one", 2)}));
  store->add_result(row_with_samples(1, {make_sample("single", 1)}));
  RowResult failed = row_with_samples(2, {make_sample("x", 1), make_sample("yy", 1)});
  failed.status = RowStatus::Failed;
  store->add_result(failed);
  store->add_result(row_with_samples(3, {make_sample("bbbbbb", 3), make_sample("a", 1)}));
  const std::string out = dir + "/pairs.jsonl";
  const ExportStats stats = export_job(*store, ExportFormat::DpoPairs, out);
  EXPECT_EQ(stats.rows_written, 2);
  EXPECT_EQ(stats.rows_skipped, 2);
  EXPECT_EQ(describe_left_out(stats),
            "2 rows left out: 1 with fewer than two successful samples, 1 failed");
  const std::vector<Json> records = read_dpo_jsonl(out);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0],
            Json::parse(R"({"prompt": "prompt 0", "chosen": "longer one", "rejected": "tiny"})"));
  EXPECT_EQ(records[1],
            Json::parse(R"({"prompt": "prompt 3", "chosen": "bbbbbb", "rejected": "a"})"));
}

TEST(DpoExport, ScoreErrorNamesTheJobAndLeavesNoOutput) {
  const std::string dir = test::make_temp_dir("export-dpo");
  const std::string path = dir + "/job.sluicejob";
  const auto store = JobStore::create(path, test::make_job_info(2));
  store->add_result(row_with_samples(0, {scored("a", 1), scored("b", 2)}));
  store->add_result(row_with_samples(1, {scored("a", 1), scored("b", Json::array())}));
  const std::string out = dir + "/pairs.jsonl";
  try {
    export_job(*store, ExportFormat::DpoPairs, out, with_rule(DpoRule::Score));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("row 1"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << entry.path();
}

PairPick dpo_pick(int64_t row_index, int chosen, int rejected, bool is_unusable = false) {
  PairPick pick;
  pick.row_index = row_index;
  pick.chosen_sample_idx = chosen;
  pick.rejected_sample_idx = rejected;
  pick.is_unusable = is_unusable;
  return pick;
}

// Rows 0-3 each have a short sample 0, a long sample 1 and a middle sample 2, so the longest rule
// alone would give (1, 0) for every row. Row 0 is picked against the rule, row 1 marked unusable,
// row 2 picked between samples 2 and 1, row 3 left to the rule.
TEST(DpoExport, ReviewPicksOverrideTheRule) {
  const std::string dir = test::make_temp_dir("export-dpo-picks");
  const std::string path = dir + "/job.sluicejob";
  const auto store = JobStore::create(path, test::make_job_info(3));
  for (int64_t i = 0; i < 4; ++i) {
    const std::string tag = std::to_string(i);
    store->add_result(
        row_with_samples(i, {make_sample("s" + tag, 1), make_sample("the longest answer " + tag, 4),
                             make_sample("middle " + tag, 2)}));
  }
  store->flush();
  {
    const auto picks = PairPickStore::open(path);
    picks->set(dpo_pick(0, 0, 1));
    picks->set(dpo_pick(1, 0, 0, /*is_unusable=*/true));
    picks->set(dpo_pick(2, 2, 1));
  }
  const std::string out = dir + "/pairs.jsonl";
  const ExportStats stats = export_job(*store, ExportFormat::DpoPairs, out);
  EXPECT_EQ(stats.rows_written, 3);
  EXPECT_EQ(stats.rows_picked, 2);
  EXPECT_EQ(describe_left_out(stats), "1 row left out: 1 marked unusable in review");
  EXPECT_EQ(describe_dpo_sources(stats, {}), "2 pairs from review picks, 1 by the longest rule");
  const std::vector<Json> records = read_dpo_jsonl(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], Json::parse(R"({"prompt": "prompt 0", "chosen": "s0",
                            "rejected": "the longest answer 0"})"));
  EXPECT_EQ(records[1], Json::parse(R"({"prompt": "prompt 2", "chosen": "middle 2",
                            "rejected": "the longest answer 2"})"));
  EXPECT_EQ(records[2], Json::parse(R"({"prompt": "prompt 3", "chosen": "the longest answer 3",
                            "rejected": "s3"})"));
}

TEST(DpoExport, PickOfAMissingSampleNamesJobAndRow) {
  const std::string dir = test::make_temp_dir("export-dpo-picks");
  const std::string path = dir + "/job.sluicejob";
  const auto store = JobStore::create(path, test::make_job_info(2));
  store->add_result(row_with_samples(5, {make_sample("a", 1), make_sample("bb", 1)}));
  store->flush();
  PairPickStore::open(path)->set(dpo_pick(5, 3, 0));
  const std::string out = dir + "/pairs.jsonl";
  try {
    export_job(*store, ExportFormat::DpoPairs, out);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    EXPECT_NE(message.find("row 5"), std::string::npos) << message;
    EXPECT_NE(message.find("sample 3"), std::string::npos) << message;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace sluice
