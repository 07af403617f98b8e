// ExportOptions::reasoning: every format under separate, keep and strip, for a sample with a
// thinking model's reasoning and for one without (which must export as it did before reasoning
// was kept apart). Every expected text is written out here by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/export/exporters.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/export_job.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::make_sample;

constexpr ReasoningExport kAllReasoningModes[] = {ReasoningExport::Separate, ReasoningExport::Keep,
                                                  ReasoningExport::Strip};

// A done row with one user turn and the given samples; seed 7 + row_index.
RowResult reasoning_test_row(int64_t row_index, const std::string& instruction,
                             std::vector<SampleResult> samples) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.input = {{"instruction", instruction}};
  row.messages = {{"user", instruction}};
  row.prompt = "<|user|>" + instruction + "<|assistant|>";
  row.prompt_tokens = 5;
  row.samples = std::move(samples);
  row.seed = 7 + static_cast<uint64_t>(row_index);
  row.queue_ms = 1.5;
  row.ttft_ms = 2.5;
  row.total_ms = 10.0;
  return row;
}

SampleResult thinking_sample(std::string answer, std::string reasoning, int reasoning_tokens) {
  SampleResult sample = make_sample(std::move(answer), 12);
  sample.reasoning = std::move(reasoning);
  sample.reasoning_tokens = reasoning_tokens;
  return sample;
}

// Row 0: a thinking model's answer "5" after two lines of reasoning.
RowResult thinking_row() {
  return reasoning_test_row(0, "Add 2 and 3.", {thinking_sample("5", "2 plus 3\nis 5.", 10)});
}

// Row 1: an answer without reasoning.
RowResult plain_answer_row() {
  return reasoning_test_row(1, "Say hi.", {make_sample("Hi.", 2)});
}

// Exports rows (n samples per row) in format under mode and returns the file's text.
std::string export_with_reasoning(const std::string& name, const std::vector<RowResult>& rows,
                                  ExportFormat format, ReasoningExport mode, int n = 1) {
  const test::ExportJob job = test::make_export_job(
      str_cat("reasoning-", name, "-", to_string(format), "-", to_string(mode)), rows, n);
  const std::string out = job.dir + "/out";
  ExportOptions options;
  options.reasoning = mode;
  export_job(*job.store, format, out, options);
  return test::read_file(out);
}

TEST(ReasoningExportNames, ParseAndPrintEachMode) {
  EXPECT_EQ(parse_reasoning_export("separate"), ReasoningExport::Separate);
  EXPECT_EQ(parse_reasoning_export("keep"), ReasoningExport::Keep);
  EXPECT_EQ(parse_reasoning_export("strip"), ReasoningExport::Strip);
  for (const ReasoningExport mode : kAllReasoningModes)
    EXPECT_EQ(parse_reasoning_export(to_string(mode)), mode);
  EXPECT_EQ(ExportOptions{}.reasoning, ReasoningExport::Separate);
  try {
    parse_reasoning_export("inline");
    FAIL() << "no error for an unknown mode";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "unknown reasoning mode 'inline' (separate, keep, strip)");
  }
}

// The jsonl line of row 1 (no reasoning), as the export wrote it before reasoning existed.
const char* kPlainJsonlLine =
    R"({"row_index":1,"line":2,"status":"done","input":{"instruction":"Say hi."},)"
    R"("messages":[{"role":"user","content":"Say hi."}],"prompt":"<|user|>Say hi.<|assistant|>",)"
    R"("prompt_tokens":5,"output":"Hi.","output_tokens":2,"finish_reason":"stop",)"
    R"("output_token_ids":[],"extra":{},"seed":8,"queue_ms":1.5,"ttft_ms":2.5,"total_ms":10.0,)"
    R"("error":""})"
    "\n";

// Row 0's jsonl line around its sample's fields.
std::string thinking_jsonl_line(const std::string& sample_fields) {
  return R"({"row_index":0,"line":1,"status":"done","input":{"instruction":"Add 2 and 3."},)"
         R"("messages":[{"role":"user","content":"Add 2 and 3."}],)"
         R"("prompt":"<|user|>Add 2 and 3.<|assistant|>","prompt_tokens":5,)" +
         sample_fields +
         R"(,"finish_reason":"stop","output_token_ids":[],"extra":{},"seed":7,"queue_ms":1.5,)"
         R"("ttft_ms":2.5,"total_ms":10.0,"error":""})"
         "\n";
}

TEST(ReasoningJsonlExport, EachModeWritesTheReasoningItsWay) {
  const std::vector<RowResult> rows = {thinking_row(), plain_answer_row()};
  EXPECT_EQ(export_with_reasoning("jsonl", rows, ExportFormat::Jsonl, ReasoningExport::Separate),
            thinking_jsonl_line(R"("output":"5","reasoning":"2 plus 3\nis 5.","output_tokens":12,)"
                                R"("reasoning_tokens":10)") +
                kPlainJsonlLine);
  EXPECT_EQ(export_with_reasoning("jsonl", rows, ExportFormat::Jsonl, ReasoningExport::Keep),
            thinking_jsonl_line(
                R"("output":"<think>\n2 plus 3\nis 5.\n</think>\n\n5","output_tokens":12)") +
                kPlainJsonlLine);
  EXPECT_EQ(export_with_reasoning("jsonl", rows, ExportFormat::Jsonl, ReasoningExport::Strip),
            thinking_jsonl_line(R"("output":"5","output_tokens":12)") + kPlainJsonlLine);
}

TEST(ReasoningJsonlExport, SamplesArrayGivesReasoningOnlyToSamplesWithIt) {
  const std::vector<RowResult> rows = {reasoning_test_row(
      0, "Add 2 and 3.", {thinking_sample("5", "Easy.", 3), make_sample("6", 1)})};
  const std::string head =
      R"({"row_index":0,"line":1,"status":"done","input":{"instruction":"Add 2 and 3."},)"
      R"("messages":[{"role":"user","content":"Add 2 and 3."}],)"
      R"("prompt":"<|user|>Add 2 and 3.<|assistant|>","prompt_tokens":5,"samples":[)";
  const std::string plain_sample =
      R"({"output":"6","output_tokens":1,"finish_reason":"stop","output_token_ids":[],)"
      R"("extra":{}})";
  const std::string tail = R"(],"seed":7,"queue_ms":1.5,"ttft_ms":2.5,"total_ms":10.0,"error":""})"
                           "\n";
  EXPECT_EQ(
      export_with_reasoning("jsonl-n2", rows, ExportFormat::Jsonl, ReasoningExport::Separate, 2),
      head +
          R"({"output":"5","reasoning":"Easy.","output_tokens":12,"reasoning_tokens":3,)"
          R"("finish_reason":"stop","output_token_ids":[],"extra":{}},)" +
          plain_sample + tail);
  EXPECT_EQ(export_with_reasoning("jsonl-n2", rows, ExportFormat::Jsonl, ReasoningExport::Keep, 2),
            head +
                R"({"output":"<think>\nEasy.\n</think>\n\n5","output_tokens":12,)"
                R"("finish_reason":"stop","output_token_ids":[],"extra":{}},)" +
                plain_sample + tail);
  EXPECT_EQ(export_with_reasoning("jsonl-n2", rows, ExportFormat::Jsonl, ReasoningExport::Strip, 2),
            head +
                R"({"output":"5","output_tokens":12,"finish_reason":"stop","output_token_ids":[],)"
                R"("extra":{}},)" +
                plain_sample + tail);
}

TEST(ReasoningJsonlExport, RowWithoutReasoningIsUnchangedInEveryMode) {
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(export_with_reasoning("jsonl-plain", {plain_answer_row()}, ExportFormat::Jsonl, mode),
              kPlainJsonlLine)
        << to_string(mode);
  }
}

TEST(ReasoningCsvExport, SeparateAddsReasoningColumns) {
  EXPECT_EQ(
      export_with_reasoning("csv", {thinking_row(), plain_answer_row()}, ExportFormat::Csv,
                            ReasoningExport::Separate),
      "row_index,status,instruction,prompt,output,reasoning,output_tokens,reasoning_tokens,"
      "finish_reason,total_ms\r\n"
      "0,done,Add 2 and 3.,<|user|>Add 2 and 3.<|assistant|>,5,\"2 plus 3\nis 5.\",12,10,stop,"
      "10.0\r\n"
      "1,done,Say hi.,<|user|>Say hi.<|assistant|>,Hi.,,2,0,stop,10.0\r\n");
}

TEST(ReasoningCsvExport, KeepAndStripWriteTheOutputColumnOnly) {
  const std::string header =
      "row_index,status,instruction,prompt,output,output_tokens,finish_reason,total_ms\r\n";
  const std::string plain_line = "1,done,Say hi.,<|user|>Say hi.<|assistant|>,Hi.,2,stop,10.0\r\n";
  const std::vector<RowResult> rows = {thinking_row(), plain_answer_row()};
  EXPECT_EQ(export_with_reasoning("csv", rows, ExportFormat::Csv, ReasoningExport::Keep),
            header +
                "0,done,Add 2 and 3.,<|user|>Add 2 and 3.<|assistant|>,"
                "\"<think>\n2 plus 3\nis 5.\n</think>\n\n5\",12,stop,10.0\r\n" +
                plain_line);
  EXPECT_EQ(export_with_reasoning("csv", rows, ExportFormat::Csv, ReasoningExport::Strip),
            header + "0,done,Add 2 and 3.,<|user|>Add 2 and 3.<|assistant|>,5,12,stop,10.0\r\n" +
                plain_line);
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(export_with_reasoning("csv-plain", {plain_answer_row()}, ExportFormat::Csv, mode),
              header + plain_line)
        << to_string(mode);
  }
}

TEST(ReasoningCsvExport, OneReasoningColumnPerSampleAndInputFieldsRenamed) {
  RowResult row =
      reasoning_test_row(0, "Pick.", {make_sample("a", 1), thinking_sample("b", "Hm.", 2)});
  row.input = {{"reasoning", "given"}, {"reasoning_1", "also given"}};
  EXPECT_EQ(export_with_reasoning("csv-n2", {row}, ExportFormat::Csv, ReasoningExport::Separate, 2),
            "row_index,status,input_reasoning,input_reasoning_1,prompt,output,output_1,"
            "reasoning,reasoning_1,output_tokens,reasoning_tokens,finish_reason,total_ms\r\n"
            "0,done,given,also given,<|user|>Pick.<|assistant|>,a,b,,Hm.,1,0,stop,10.0\r\n");
  // Without reasoning columns the input fields keep their names.
  EXPECT_EQ(export_with_reasoning("csv-n2", {row}, ExportFormat::Csv, ReasoningExport::Strip, 2),
            "row_index,status,reasoning,reasoning_1,prompt,output,output_1,output_tokens,"
            "finish_reason,total_ms\r\n"
            "0,done,given,also given,<|user|>Pick.<|assistant|>,a,b,1,stop,10.0\r\n");
}

TEST(ReasoningCsvExport, FlattenedFieldsComeFromTheAnswerUnderKeep) {
  const test::ExportJob job = test::make_export_job(
      "reasoning-csv-flatten",
      {reasoning_test_row(0, "Mood?", {thinking_sample(R"({"mood":"happy"})", "Smiles.", 4)})});
  const std::string out = job.dir + "/out.csv";
  ExportOptions options;
  options.reasoning = ReasoningExport::Keep;
  options.flatten_output = true;
  export_job(*job.store, ExportFormat::Csv, out, options);
  EXPECT_EQ(
      test::read_file(out),
      "row_index,status,instruction,prompt,output,output.mood,output_tokens,finish_reason,"
      "total_ms\r\n"
      "0,done,Mood?,<|user|>Mood?<|assistant|>,"
      "\"<think>\nSmiles.\n</think>\n\n{\"\"mood\"\":\"\"happy\"\"}\",happy,12,stop,10.0\r\n");
}

TEST(ReasoningAlpacaExport, EachModeWritesTheReasoningItsWay) {
  const std::vector<RowResult> rows = {thinking_row(), plain_answer_row()};
  const std::string plain_record = R"({"instruction":"Say hi.","input":"","output":"Hi."})";
  EXPECT_EQ(
      export_with_reasoning("alpaca", rows, ExportFormat::Alpaca, ReasoningExport::Separate),
      "[\n  "
      R"({"instruction":"Add 2 and 3.","input":"","output":"5","reasoning":"2 plus 3\nis 5."})"
      ",\n  " +
          plain_record + "\n]\n");
  EXPECT_EQ(
      export_with_reasoning("alpaca", rows, ExportFormat::Alpaca, ReasoningExport::Keep),
      "[\n  "
      R"({"instruction":"Add 2 and 3.","input":"","output":"<think>\n2 plus 3\nis 5.\n</think>\n\n5"})"
      ",\n  " +
          plain_record + "\n]\n");
  EXPECT_EQ(export_with_reasoning("alpaca", rows, ExportFormat::Alpaca, ReasoningExport::Strip),
            "[\n  "
            R"({"instruction":"Add 2 and 3.","input":"","output":"5"})"
            ",\n  " +
                plain_record + "\n]\n");
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(
        export_with_reasoning("alpaca-plain", {plain_answer_row()}, ExportFormat::Alpaca, mode),
        "[\n  " + plain_record + "\n]\n")
        << to_string(mode);
  }
}

TEST(ReasoningOpenAiChatExport, EachModeWritesTheReasoningItsWay) {
  const std::vector<RowResult> rows = {thinking_row(), plain_answer_row()};
  const std::string plain_line =
      R"({"messages":[{"role":"user","content":"Say hi."},{"role":"assistant","content":"Hi."}]})"
      "\n";
  EXPECT_EQ(
      export_with_reasoning("openai", rows, ExportFormat::OpenAiChat, ReasoningExport::Separate),
      R"({"messages":[{"role":"user","content":"Add 2 and 3."},)"
      R"({"role":"assistant","content":"5","reasoning_content":"2 plus 3\nis 5."}]})"
      "\n" +
          plain_line);
  EXPECT_EQ(export_with_reasoning("openai", rows, ExportFormat::OpenAiChat, ReasoningExport::Keep),
            R"({"messages":[{"role":"user","content":"Add 2 and 3."},)"
            R"({"role":"assistant","content":"<think>\n2 plus 3\nis 5.\n</think>\n\n5"}]})"
            "\n" +
                plain_line);
  EXPECT_EQ(export_with_reasoning("openai", rows, ExportFormat::OpenAiChat, ReasoningExport::Strip),
            R"({"messages":[{"role":"user","content":"Add 2 and 3."},)"
            R"({"role":"assistant","content":"5"}]})"
            "\n" +
                plain_line);
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(
        export_with_reasoning("openai-plain", {plain_answer_row()}, ExportFormat::OpenAiChat, mode),
        plain_line)
        << to_string(mode);
  }
}

TEST(ReasoningShareGptExport, EachModeWritesTheReasoningItsWay) {
  const std::vector<RowResult> rows = {thinking_row(), plain_answer_row()};
  const std::string plain_record =
      R"({"id":"1","conversations":[{"from":"human","value":"Say hi."},)"
      R"({"from":"gpt","value":"Hi."}]})";
  const std::string head =
      "[\n  "
      R"({"id":"0","conversations":[{"from":"human","value":"Add 2 and 3."},)";
  EXPECT_EQ(
      export_with_reasoning("sharegpt", rows, ExportFormat::ShareGpt, ReasoningExport::Separate),
      head + R"({"from":"gpt","value":"5","reasoning_content":"2 plus 3\nis 5."}]},)" + "\n  " +
          plain_record + "\n]\n");
  EXPECT_EQ(export_with_reasoning("sharegpt", rows, ExportFormat::ShareGpt, ReasoningExport::Keep),
            head + R"({"from":"gpt","value":"<think>\n2 plus 3\nis 5.\n</think>\n\n5"}]},)" +
                "\n  " + plain_record + "\n]\n");
  EXPECT_EQ(export_with_reasoning("sharegpt", rows, ExportFormat::ShareGpt, ReasoningExport::Strip),
            head + R"({"from":"gpt","value":"5"}]},)" + "\n  " + plain_record + "\n]\n");
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(
        export_with_reasoning("sharegpt-plain", {plain_answer_row()}, ExportFormat::ShareGpt, mode),
        "[\n  " + plain_record + "\n]\n")
        << to_string(mode);
  }
}

// Sample 0's answer is the shorter one but its reasoning makes it the longer text: the longest
// rule must pick sample 1, whose answer is longer.
RowResult long_reasoning_pair_row() {
  return reasoning_test_row(
      0, "Add 2 and 3.",
      {thinking_sample("5", "2 plus 3\nis 5. Checking again: 2 plus 3 is 5.", 20),
       make_sample("The sum is 5.", 5)});
}

TEST(ReasoningDpoExport, RuleComparesAnswersAndEachModeWritesTheReasoningItsWay) {
  const std::vector<RowResult> rows = {long_reasoning_pair_row()};
  const std::string head =
      R"({"prompt":"<|user|>Add 2 and 3.<|assistant|>","chosen":"The sum is 5.","rejected":)";
  EXPECT_EQ(
      export_with_reasoning("dpo", rows, ExportFormat::DpoPairs, ReasoningExport::Separate, 2),
      head + R"("5","chosen_reasoning":"","rejected_reasoning":)"
             R"("2 plus 3\nis 5. Checking again: 2 plus 3 is 5."})"
             "\n");
  EXPECT_EQ(export_with_reasoning("dpo", rows, ExportFormat::DpoPairs, ReasoningExport::Keep, 2),
            head + R"("<think>\n2 plus 3\nis 5. Checking again: 2 plus 3 is 5.\n</think>\n\n5"})"
                   "\n");
  EXPECT_EQ(export_with_reasoning("dpo", rows, ExportFormat::DpoPairs, ReasoningExport::Strip, 2),
            head + R"("5"})"
                   "\n");
}

TEST(ReasoningDpoExport, ShortestRuleAlsoComparesAnswers) {
  const test::ExportJob job =
      test::make_export_job("reasoning-dpo-shortest", {long_reasoning_pair_row()}, 2);
  const std::string out = job.dir + "/out.jsonl";
  ExportOptions options;
  options.dpo_rule = DpoRule::Shortest;
  options.reasoning = ReasoningExport::Strip;
  export_job(*job.store, ExportFormat::DpoPairs, out, options);
  EXPECT_EQ(test::read_file(out),
            R"({"prompt":"<|user|>Add 2 and 3.<|assistant|>","chosen":"5","rejected":)"
            R"("The sum is 5."})"
            "\n");
}

TEST(ReasoningDpoExport, SameAnswerWithOtherReasoningIsNoPairInAnyMode) {
  const std::vector<RowResult> rows = {reasoning_test_row(
      0, "Add 2 and 3.", {thinking_sample("5", "Count up.", 2), thinking_sample("5", "Add.", 1)})};
  for (const ReasoningExport mode : kAllReasoningModes) {
    const test::ExportJob job =
        test::make_export_job(str_cat("reasoning-dpo-same-", to_string(mode)), rows, 2);
    const std::string out = job.dir + "/out.jsonl";
    ExportOptions options;
    options.reasoning = mode;
    const ExportStats stats = export_job(*job.store, ExportFormat::DpoPairs, out, options);
    EXPECT_EQ(test::read_file(out), "") << to_string(mode);
    EXPECT_EQ(describe_left_out(stats),
              "1 row left out: 1 with identical chosen and rejected outputs")
        << to_string(mode);
  }
}

TEST(ReasoningDpoExport, PairWithoutReasoningIsUnchangedInEveryMode) {
  const std::vector<RowResult> rows = {
      reasoning_test_row(1, "Say hi.", {make_sample("Hi.", 2), make_sample("Hello.", 2)})};
  for (const ReasoningExport mode : kAllReasoningModes) {
    EXPECT_EQ(export_with_reasoning("dpo-plain", rows, ExportFormat::DpoPairs, mode, 2),
              R"({"prompt":"<|user|>Say hi.<|assistant|>","chosen":"Hello.","rejected":"Hi."})"
              "\n")
        << to_string(mode);
  }
}

// The openai-batch export hands its body builder each row as the mode shows it; the builder
// (the app's, tested in tests/unit/app) writes what reasoning it finds.
TEST(ReasoningOpenAiBatchExport, BodyBuilderSeesTheRowAsTheModeShowsIt) {
  const test::ExportJob job = test::make_export_job("reasoning-batch", {thinking_row()});
  const std::string out = job.dir + "/out.jsonl";
  std::vector<SampleResult> seen;
  ExportOptions options;
  options.batch_response_body = [&](const RowResult& row, const std::string&, int64_t) {
    seen.push_back(row.samples.at(0));
    return nlohmann::json::object();
  };
  for (const ReasoningExport mode : kAllReasoningModes) {
    options.reasoning = mode;
    export_job(*job.store, ExportFormat::OpenAiBatch, out, options);
  }
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], thinking_sample("5", "2 plus 3\nis 5.", 10));
  EXPECT_EQ(seen[1], make_sample("<think>\n2 plus 3\nis 5.\n</think>\n\n5", 12));
  EXPECT_EQ(seen[2], make_sample("5", 12));
}

}  // namespace
}  // namespace sluice
