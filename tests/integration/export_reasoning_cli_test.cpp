// `sluice jobs export --reasoning separate|keep|strip` on a job holding a thinking model's row
// (written with the job store, as a thinking model's run leaves it): each mode's openai and
// openai-batch records, and a usage error for an unknown mode.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

// Writes <dir>/thinking.sluicejob with one done row: the chat batch line "q", answer "5" after
// the reasoning "2 plus 3 is 5." (10 of 12 tokens). Returns its path.
std::string write_thinking_job(const std::string& dir) {
  const std::string path = dir + "/thinking.sluicejob";
  RowResult row;
  row.input = nlohmann::ordered_json::parse(
      R"({"custom_id": "q", "url": "/v1/chat/completions", "body": {"model": "m"}})");
  row.messages = {{"user", "Add 2 and 3."}};
  row.prompt = "<|user|>Add 2 and 3.<|assistant|>";
  row.prompt_tokens = 5;
  SampleResult sample = make_sample("5", 12);
  sample.reasoning = "2 plus 3 is 5.";
  sample.reasoning_tokens = 10;
  row.samples = {sample};
  const auto store = JobStore::create(path, make_job_info());
  store->add_result(row);
  store->flush();
  return path;
}

// Exports job as format with the given --reasoning (none when mode is "") and returns its lines.
std::vector<nlohmann::json> export_reasoning(const std::string& job, const std::string& format,
                                             const std::string& mode) {
  const std::string out = job + "." + format + "." + (mode.empty() ? "default" : mode) + ".jsonl";
  std::vector<std::string> args = {"jobs", "export", job, "--format", format, "--output", out};
  if (!mode.empty()) args.insert(args.end(), {"--reasoning", mode});
  const ProcessResult r = run_sluice(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return read_jsonl(out);
}

TEST(ExportReasoningCli, EachModeWritesTheReasoningItsWay) {
  const std::string job = write_thinking_job(make_temp_dir("export_reasoning"));
  const nlohmann::json user = {{"role", "user"}, {"content", "Add 2 and 3."}};
  const nlohmann::json separate = {
      {"messages",
       {user, {{"role", "assistant"}, {"content", "5"}, {"reasoning_content", "2 plus 3 is 5."}}}}};
  EXPECT_EQ(export_reasoning(job, "openai", ""), std::vector<nlohmann::json>{separate});
  EXPECT_EQ(export_reasoning(job, "openai", "separate"), std::vector<nlohmann::json>{separate});
  const nlohmann::json keep = {
      {"messages",
       {user, {{"role", "assistant"}, {"content", "<think>\n2 plus 3 is 5.\n</think>\n\n5"}}}}};
  EXPECT_EQ(export_reasoning(job, "openai", "keep"), std::vector<nlohmann::json>{keep});
  const nlohmann::json strip = {{"messages", {user, {{"role", "assistant"}, {"content", "5"}}}}};
  EXPECT_EQ(export_reasoning(job, "openai", "strip"), std::vector<nlohmann::json>{strip});
}

TEST(ExportReasoningCli, BatchOutputHasTheReasoningUnderSeparateOnly) {
  const std::string job = write_thinking_job(make_temp_dir("export_reasoning_batch"));
  const std::vector<nlohmann::json> separate = export_reasoning(job, "openai-batch", "");
  ASSERT_EQ(separate.size(), 1u);
  const nlohmann::json& body = separate[0]["response"]["body"];
  EXPECT_EQ(body["choices"][0]["message"], nlohmann::json({{"role", "assistant"},
                                                           {"content", "5"},
                                                           {"reasoning_content", "2 plus 3 is 5."},
                                                           {"reasoning", "2 plus 3 is 5."}}));
  EXPECT_EQ(body["usage"]["completion_tokens_details"], nlohmann::json({{"reasoning_tokens", 10}}));
  const std::vector<nlohmann::json> keep = export_reasoning(job, "openai-batch", "keep");
  ASSERT_EQ(keep.size(), 1u);
  EXPECT_EQ(keep[0]["response"]["body"]["choices"][0]["message"],
            nlohmann::json(
                {{"role", "assistant"}, {"content", "<think>\n2 plus 3 is 5.\n</think>\n\n5"}}));
  EXPECT_FALSE(keep[0]["response"]["body"]["usage"].contains("completion_tokens_details"));
  const std::vector<nlohmann::json> strip = export_reasoning(job, "openai-batch", "strip");
  ASSERT_EQ(strip.size(), 1u);
  EXPECT_EQ(strip[0]["response"]["body"]["choices"][0]["message"],
            nlohmann::json({{"role", "assistant"}, {"content", "5"}}));
}

TEST(ExportReasoningCli, UnknownModeIsAUsageError) {
  const std::string dir = make_temp_dir("export_reasoning_bad");
  const std::string job = write_thinking_job(dir);
  const ProcessResult r = run_sluice({"jobs", "export", job, "--format", "jsonl", "--output",
                                      dir + "/out.jsonl", "--reasoning", "inline"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown reasoning mode 'inline' (separate, keep, strip)"));
}

}  // namespace
}  // namespace sluice::test
