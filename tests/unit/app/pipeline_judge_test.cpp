// The judge's answers read back (judge_rubric), folded into the generated rows (judge_step:
// ratings averaged, comparisons in both orders and their agreement), and the pairs a DPO dataset
// takes from them (dataset_records: best vs worst, ties and small margins dropped, a person's pick
// over the judge, what the filter and dedup took out).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "app/pipeline/dataset_records.h"
#include "app/pipeline/judge_rubric.h"
#include "app/pipeline/judge_step.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/pair_pick_store.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

RowResult generated_row(int64_t index, const std::vector<std::string>& outputs) {
  RowResult row;
  row.row_index = index;
  row.messages = {{"user", "Say something " + std::to_string(index), ""}};
  row.prompt = "<prompt>";
  for (const std::string& output : outputs) {
    SampleResult s;
    s.output = output;
    s.output_tokens = static_cast<int>(output.size());
    s.finish_reason = "stop";
    row.samples.push_back(s);
  }
  return row;
}

// A judge job's row: the judgement asked (input fields) and the judge's k answers.
RowResult judge_row(int64_t index, Json input, const std::vector<std::string>& answers) {
  RowResult row;
  row.row_index = index;
  row.input = std::move(input);
  for (const std::string& answer : answers) {
    SampleResult s;
    s.output = answer;
    s.finish_reason = "stop";
    row.samples.push_back(s);
  }
  return row;
}

std::string rating(int value) {
  return Json{{"rationale", "r" + std::to_string(value)}, {"rating", value}}.dump();
}

std::string winner(const char* w) {
  return Json{{"rationale", std::string("w") + w}, {"winner", w}}.dump();
}

TEST(JudgeRubric, AnswersParseOnlyAsTheRubricsJson) {
  const auto ok = parse_judge_output(JudgeRubric::Ultrafeedback, rating(4));
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->value, 4.0);
  EXPECT_EQ(ok->rationale, "r4");
  std::string why;
  EXPECT_FALSE(parse_judge_output(JudgeRubric::Ultrafeedback, "{\"rationale\": \"cut", &why));
  EXPECT_THAT(why, ::testing::HasSubstr("not JSON"));
  EXPECT_FALSE(parse_judge_output(JudgeRubric::Ultrafeedback, "{\"rating\": 6}", &why));
  EXPECT_THAT(why, ::testing::HasSubstr("outside 1-5"));
  EXPECT_FALSE(parse_judge_output(JudgeRubric::Ultrafeedback, winner("A")));
  EXPECT_EQ(parse_judge_output(JudgeRubric::Pairwise, winner("A"))->value, 1.0);
  EXPECT_EQ(parse_judge_output(JudgeRubric::Pairwise, winner("B"))->value, 0.0);
  EXPECT_EQ(parse_judge_output(JudgeRubric::Pairwise, winner("tie"))->value, 0.5);
  EXPECT_FALSE(parse_judge_output(JudgeRubric::Pairwise, "{\"winner\": \"C\"}"));
  // The schema asks for the rationale before the verdict, bounded.
  const Json schema = Json::parse(judge_schema(JudgeRubric::Ultrafeedback, 99));
  EXPECT_EQ(schema["properties"].begin().key(), "rationale");
  EXPECT_EQ(schema["properties"]["rationale"]["maxLength"], 99);
  EXPECT_EQ(schema["properties"]["rating"]["maximum"], 5);
}

TEST(JudgeStep, RatingsAreAveragedPerSampleAndFoldedIntoTheGeneratedRows) {
  const std::string dir = test::make_temp_dir("judge-fold");
  auto generated = JobStore::create(dir + "/gen.sluicejob", JobInfo{});
  generated->add_result(generated_row(0, {"a", "bb", "ccc"}));
  generated->add_result(generated_row(1, {"d", "ee"}));
  generated->flush();

  JudgeStep judge;  // ultrafeedback
  write_judge_input(*generated, judge, dir + "/judge.jsonl");
  const std::string lines = test::read_file(dir + "/judge.jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 5);  // one per sample
  EXPECT_THAT(lines, ::testing::HasSubstr("Say something 1"));

  auto judged = JobStore::create(dir + "/judge.sluicejob", JobInfo{});
  // k = 2 answers each; sample (0, 2)'s second answer is cut off and does not count.
  judged->add_result(judge_row(0, {{"row", 0}, {"sample", 0}}, {rating(2), rating(3)}));
  judged->add_result(judge_row(1, {{"row", 0}, {"sample", 1}}, {rating(5), rating(5)}));
  judged->add_result(judge_row(2, {{"row", 0}, {"sample", 2}}, {rating(1), "{\"rati"}));
  judged->add_result(judge_row(3, {{"row", 1}, {"sample", 0}}, {rating(4), rating(4)}));
  judged->add_result(judge_row(4, {{"row", 1}, {"sample", 1}}, {rating(4), rating(4)}));
  judged->flush();

  const Judgements j = read_judgements(*judged, judge);
  EXPECT_EQ(j.num_asked, 10);
  EXPECT_EQ(j.num_failed, 1);
  ASSERT_EQ(j.extras.at(0).size(), 3u);
  EXPECT_EQ(j.extras.at(0)[0]["score"], 2.5);
  EXPECT_EQ(j.extras.at(0)[1]["score"], 5.0);
  EXPECT_EQ(j.extras.at(0)[2]["score"], 1.0);
  EXPECT_EQ(j.extras.at(0)[0]["judge"]["rationales"], Json({"r2", "r3"}));

  apply_judgements(*generated, j);
  const RowResult row0 = *generated->result(0);
  EXPECT_EQ(row0.samples[1].extra["score"], 5.0);
  EXPECT_EQ(row0.samples[1].extra["judge"]["rubric"], "ultrafeedback");

  // Pairs: row 0 best (sample 1, 5.0) against worst (sample 2, 1.0); row 1 a tie, dropped.
  PipelineDescription d;
  d.name = "t";
  PipelineStep g, js;
  g.kind = StepKind::Generate;
  js.kind = StepKind::Judge;
  js.judge = judge;
  d.steps = {g, js};
  DatasetRecords records = build_dataset_records(*generated, d, {}, {});
  ASSERT_EQ(records.rows.size(), 1u);
  EXPECT_EQ(records.rows[0]["chosen"].back()["content"], "bb");
  EXPECT_EQ(records.rows[0]["rejected"].back()["content"], "ccc");
  EXPECT_EQ(records.rows[0]["chosen"].front()["content"], "Say something 0");
  EXPECT_EQ(records.rows[0]["score_chosen"], 5.0);
  EXPECT_EQ(records.rows[0]["score_rejected"], 1.0);
  EXPECT_EQ(records.rows[0]["source"], "judge");
  EXPECT_EQ(records.rows_without_pair["a tie by the judge"], 1);

  // The filter took out sample 1 of row 0: the best left is sample 0 (2.5).
  Removals removals;
  removals.samples[{0, 1}] = "refusal";
  records = build_dataset_records(*generated, d, removals, {});
  ASSERT_EQ(records.rows.size(), 1u);
  EXPECT_EQ(records.rows[0]["chosen"].back()["content"], "a");

  // A margin of 4.5 is wanted: 5.0 - 1.0 falls short.
  d.steps[1].judge.pairs.min_margin = 4.5;
  records = build_dataset_records(*generated, d, {}, {});
  EXPECT_EQ(records.rows.size(), 0u);
  EXPECT_EQ(records.rows_without_pair["a margin under min_margin"], 1);
  d.steps[1].judge.pairs.min_margin = 0;

  // A person's pick wins: row 0 chosen 2 over 1, and row 1 (a judge tie) reviewed as 1 over 0.
  std::map<int64_t, PairPick> picks;
  picks[0] = PairPick{0, 2, 1, false, false};
  picks[1] = PairPick{1, 1, 0, false, false};
  records = build_dataset_records(*generated, d, {}, picks);
  ASSERT_EQ(records.rows.size(), 2u);
  EXPECT_EQ(records.rows[0]["chosen"].back()["content"], "ccc");
  EXPECT_EQ(records.rows[0]["source"], "review");
  EXPECT_EQ(records.rows[1]["chosen"].back()["content"], "ee");
  EXPECT_EQ(records.pairs_by_review, 2);

  // Dedup took row 0 out.
  removals = {};
  removals.rows[0] = {"exact duplicate of row 5", 5};
  records = build_dataset_records(*generated, d, removals, {});
  EXPECT_EQ(records.rows.size(), 0u);
}

TEST(JudgeStep, ComparisonsInBothOrdersCancelThePositionAndCountAgreement) {
  const std::string dir = test::make_temp_dir("judge-pairwise");
  auto generated = JobStore::create(dir + "/gen.sluicejob", JobInfo{});
  generated->add_result(generated_row(0, {"x", "yy", "zzz"}));
  generated->flush();
  JudgeStep judge;
  judge.rubric = JudgeRubric::Pairwise;
  write_judge_input(*generated, judge, dir + "/judge.jsonl");
  const std::string lines = test::read_file(dir + "/judge.jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 6);  // 3 pairs, 2 orders

  auto judged = JobStore::create(dir + "/judge.sluicejob", JobInfo{});
  // (0, 1): A wins in both orders: a judge that prefers position A; 0 and 1 each win once.
  judged->add_result(
      judge_row(0, {{"row", 0}, {"sample", 0}, {"other", 1}, {"order", "AB"}}, {winner("A")}));
  judged->add_result(
      judge_row(1, {{"row", 0}, {"sample", 0}, {"other", 1}, {"order", "BA"}}, {winner("A")}));
  // (0, 2): sample 2 wins in both orders (B, then A).
  judged->add_result(
      judge_row(2, {{"row", 0}, {"sample", 0}, {"other", 2}, {"order", "AB"}}, {winner("B")}));
  judged->add_result(
      judge_row(3, {{"row", 0}, {"sample", 0}, {"other", 2}, {"order", "BA"}}, {winner("A")}));
  // (1, 2): a tie, then 1 wins (as A in order AB... here as B in BA).
  judged->add_result(
      judge_row(4, {{"row", 0}, {"sample", 1}, {"other", 2}, {"order", "AB"}}, {winner("tie")}));
  judged->add_result(
      judge_row(5, {{"row", 0}, {"sample", 1}, {"other", 2}, {"order", "BA"}}, {winner("B")}));
  judged->flush();

  const Judgements j = read_judgements(*judged, judge);
  ASSERT_TRUE(j.position_agreement);
  EXPECT_DOUBLE_EQ(*j.position_agreement, 1.0 / 3.0);  // only (0, 2) agrees
  const auto& extras = j.extras.at(0);
  // Sample 0: 1, 0 against 1; 0, 0 against 2 -> 0.25. Sample 1: 0, 1 against 0; 0.5, 1 -> 0.625.
  // Sample 2: 1, 1 against 0; 0.5, 0 against 1 -> 0.625.
  EXPECT_DOUBLE_EQ(extras[0]["score"].get<double>(), 0.25);
  EXPECT_DOUBLE_EQ(extras[1]["score"].get<double>(), 0.625);
  EXPECT_DOUBLE_EQ(extras[2]["score"].get<double>(), 0.625);
  EXPECT_EQ(extras[2]["judge"]["rubric"], "pairwise");
}

}  // namespace
}  // namespace sluice
