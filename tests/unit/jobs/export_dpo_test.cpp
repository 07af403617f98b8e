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

// A tie is a pair the rule cannot tell apart: equal rank keys, or for longest and shortest both
// samples cut at max_tokens (finish_reason "length"); first and last rank nothing.
TEST(DpoPair, TiesAreSaidWhenTheRuleCannotTellTheSamplesApart) {
  const auto tie_of = [](const RowResult& row, DpoRule rule) {
    const auto pair = choose_dpo_pair(row, with_rule(rule));
    EXPECT_TRUE(pair.has_value());
    return pair && pair->is_tie;
  };
  // Both cut at max_tokens, lengths 9 and 4: the longer is chosen, and it is a tie.
  const RowResult both_cut = row_with_samples(
      0, {make_sample("cut short", 8, "length"), make_sample("tiny", 8, "length")});
  EXPECT_TRUE(tie_of(both_cut, DpoRule::Longest));
  EXPECT_TRUE(tie_of(both_cut, DpoRule::Shortest));
  EXPECT_EQ(choose_dpo_pair(both_cut, {})->chosen_sample_idx, 0u);
  EXPECT_FALSE(tie_of(both_cut, DpoRule::FirstChosen));
  EXPECT_FALSE(tie_of(both_cut, DpoRule::LastChosen));
  // One finished, one cut: the lengths say something.
  const RowResult one_cut = row_with_samples(
      0, {make_sample("finished", 3), make_sample("cut at the limit", 8, "length")});
  EXPECT_FALSE(tie_of(one_cut, DpoRule::Longest));
  EXPECT_FALSE(tie_of(one_cut, DpoRule::Shortest));
  // Equal lengths, different words.
  const RowResult same_length = row_with_samples(0, {make_sample("abc", 1), make_sample("xyz", 1)});
  EXPECT_TRUE(tie_of(same_length, DpoRule::Longest));
  EXPECT_FALSE(tie_of(same_length, DpoRule::FirstChosen));
  // Scores: equal is a tie, different is not.
  EXPECT_TRUE(tie_of(row_with_samples(0, {scored("a", 1.5), scored("b", 1.5)}), DpoRule::Score));
  EXPECT_FALSE(tie_of(row_with_samples(0, {scored("a", 1.5), scored("b", 2)}), DpoRule::Score));
  // Different lengths, both finished: no tie.
  EXPECT_FALSE(tie_of(row_with_samples(0, {make_sample("short", 1), make_sample("longer", 2)}),
                      DpoRule::Longest));
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
  EXPECT_EQ(describe_dpo_sources(stats, {}),
            "2 pairs from review picks, 1 by the longest rule, 0 of them ties");
  const std::vector<Json> records = read_dpo_jsonl(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], Json::parse(R"({"prompt": "prompt 0", "chosen": "s0",
                            "rejected": "the longest answer 0"})"));
  EXPECT_EQ(records[1], Json::parse(R"({"prompt": "prompt 2", "chosen": "middle 2",
                            "rejected": "the longest answer 2"})"));
  EXPECT_EQ(records[2], Json::parse(R"({"prompt": "prompt 3", "chosen": "the longest answer 3",
                            "rejected": "s3"})"));
}

// Six rows whose outcome is known by construction: 0 picked against the rule, 1 a tie in review,
// 2 a clear rule pair, 3 a rule pair of two samples cut at max_tokens (a tie), 4 a rule pair of
// equal lengths (a tie), 5 unusable.
std::string write_counted_dpo_job(const std::string& dir) {
  const std::string path = dir + "/job.sluicejob";
  const auto store = JobStore::create(path, test::make_job_info(2));
  store->add_result(row_with_samples(0, {make_sample("tiny", 1), make_sample("a longer one", 3)}));
  store->add_result(row_with_samples(1, {make_sample("left", 1), make_sample("right!", 1)}));
  store->add_result(row_with_samples(2, {make_sample("no", 1), make_sample("yes, since", 2)}));
  store->add_result(
      row_with_samples(3, {make_sample("cut", 8, "length"), make_sample("also cut", 8, "length")}));
  store->add_result(row_with_samples(4, {make_sample("same", 1), make_sample("size", 1)}));
  store->add_result(row_with_samples(5, {make_sample("x", 1), make_sample("yy", 1)}));
  store->flush();
  const auto picks = PairPickStore::open(path);
  picks->set(dpo_pick(0, 0, 1));
  PairPick tie = dpo_pick(1, 0, 1);
  tie.is_tie = true;
  picks->set(tie);
  picks->set(dpo_pick(5, 0, 1, /*is_unusable=*/true));
  return path;
}

TEST(DpoExport, CountsPicksRulePairsAndTies) {
  const std::string dir = test::make_temp_dir("export-dpo-counts");
  const auto store = JobStore::open(write_counted_dpo_job(dir));
  const std::string out = dir + "/pairs.jsonl";
  const ExportStats stats = export_job(*store, ExportFormat::DpoPairs, out);
  EXPECT_EQ(stats.rows_written, 4);  // rows 0, 2, 3, 4
  EXPECT_EQ(stats.rows_picked, 1);
  EXPECT_EQ(stats.dpo_rule_ties, 2);  // rows 3 and 4
  EXPECT_EQ(describe_left_out(stats),
            "2 rows left out: 1 marked a tie in review, 1 marked unusable in review");
  EXPECT_EQ(describe_dpo_sources(stats, {}),
            "1 pair from review picks, 3 by the longest rule, 2 of them ties");
  const std::vector<Json> records = read_dpo_jsonl(out);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0]["chosen"], "tiny");        // the pick, against the rule
  EXPECT_EQ(records[1]["chosen"], "yes, since");  // the rule
  EXPECT_EQ(records[2]["chosen"], "also cut");    // a tie, written as the rule ranks it
  EXPECT_EQ(records[3]["chosen"], "same");        // a tie of equal keys: the lower sample

  ExportOptions last = with_rule(DpoRule::LastChosen);
  const ExportStats by_position = export_job(*store, ExportFormat::DpoPairs, out, last);
  EXPECT_EQ(by_position.dpo_rule_ties, 0);
  EXPECT_EQ(describe_dpo_sources(by_position, last),
            "1 pair from review picks, 3 by the last rule, 0 of them ties");
}

TEST(DpoExport, ReviewedOnlyLeavesTheOthersOut) {
  const std::string dir = test::make_temp_dir("export-dpo-reviewed");
  const auto store = JobStore::open(write_counted_dpo_job(dir));
  const std::string out = dir + "/pairs.jsonl";
  ExportOptions options;
  options.reviewed_only = true;
  const ExportStats stats = export_job(*store, ExportFormat::DpoPairs, out, options);
  EXPECT_EQ(stats.rows_written, 1);
  EXPECT_EQ(stats.rows_picked, 1);
  EXPECT_EQ(stats.dpo_rule_ties, 0);
  EXPECT_EQ(describe_left_out(stats),
            "5 rows left out: 1 marked a tie in review, 3 not reviewed, 1 marked unusable in "
            "review");
  EXPECT_EQ(describe_dpo_sources(stats, options),
            "1 pair from review picks, 0 by the longest rule (reviewed rows only), 0 of them ties");
  const std::vector<Json> records = read_dpo_jsonl(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0],
            Json::parse(R"({"prompt": "prompt 0", "chosen": "tiny", "rejected": "a longer one"})"));
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
