// A job's rows as a Hub folder: one record per sample with the conversation and answer as
// messages, failed rows left out and counted, the reasoning by ExportOptions::reasoning, and a
// card whose provenance names files, never their folders.
#include "engine/export/export_hub.h"

#include <gtest/gtest.h>

#include <string>

#include "engine/jobs/job_store.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

// Writes a job with a done row (make_row(0)), a failed row, and a row of two samples whose first
// has reasoning; returns its path.
std::string write_hub_test_job(const std::string& dir) {
  const std::string path = dir + "/pairs.sluicejob";
  JobInfo info = test::make_job_info(2);
  info.params["input_path"] = "/home/someone/data/in.jsonl";  // as GenerationSpec keeps them
  info.params["engine"] = {{"tokenizer_path", "/home/someone/tok.model"}};
  const auto store = JobStore::create(path, info);
  store->add_result(test::make_row(0));
  store->add_result(test::make_failed_row(1));
  RowResult row;
  row.row_index = 2;
  row.line = 3;
  row.prompt = "PROMPT";  // no conversation: the prompt is the user turn
  SampleResult thought = test::make_sample("5", 12);
  thought.reasoning = "2+3";
  thought.reasoning_tokens = 10;
  row.samples = {thought, test::make_sample("five", 3, "length")};
  store->add_result(row);
  store->flush();
  return path;
}

TEST(ExportHubTest, OneRecordPerSampleWithTheConversationAndAnswer) {
  const std::string dir = test::make_temp_dir("export_hub");
  const auto job = JobStore::open(write_hub_test_job(dir));
  const HubExportStats stats = export_job_hub(*job, dir + "/hub", {});
  EXPECT_EQ(stats.rows.rows_written, 2);
  EXPECT_EQ(stats.rows.records_written, 3);
  ASSERT_EQ(stats.rows.left_out.size(), 1u);
  EXPECT_EQ(stats.rows.left_out[0], (std::pair<std::string, int64_t>{"failed", 1}));
  EXPECT_EQ(stats.folder.num_rows, 3u);
  EXPECT_EQ(
      test::read_file(dir + "/hub/data/train.jsonl"),
      "{\"row_index\":0,\"sample_index\":0,\"prompt\":\"Say \\\"hi\\\", then\\nstop #0\","
      "\"messages\":[{\"content\":\"Be brief.\",\"role\":\"system\"},{\"content\":\"Say "
      "\\\"hi\\\", then\\nstop #0\",\"role\":\"user\"},{\"content\":\"Hi, \\\"there\\\"\\r\\nbye "
      "0\",\"role\":\"assistant\"}],\"reasoning\":null,\"finish_reason\":\"stop\","
      "\"output_tokens\":9,\"model\":\"stories15M.bin\"}\n"
      "{\"row_index\":2,\"sample_index\":0,\"prompt\":\"PROMPT\",\"messages\":[{\"content\":"
      "\"PROMPT\",\"role\":\"user\"},{\"content\":\"5\",\"role\":\"assistant\"}],"
      "\"reasoning\":\"2+3\",\"finish_reason\":\"stop\",\"output_tokens\":12,"
      "\"model\":\"stories15M.bin\"}\n"
      "{\"row_index\":2,\"sample_index\":1,\"prompt\":\"PROMPT\",\"messages\":[{\"content\":"
      "\"PROMPT\",\"role\":\"user\"},{\"content\":\"five\",\"role\":\"assistant\"}],"
      "\"reasoning\":null,\"finish_reason\":\"length\",\"output_tokens\":3,"
      "\"model\":\"stories15M.bin\"}\n");
  const std::string card = test::read_file(dir + "/hub/README.md");
  EXPECT_NE(card.find("pretty_name: \"pairs\"\n"), std::string::npos) << card;
  EXPECT_NE(card.find("    num_examples: 3\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  - **file**: `stories15M.bin`\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  - **temperature**: `0.7`\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  - **failed**: `1`\n"), std::string::npos) << card;
  EXPECT_NE(card.find("  - **input\\_path**: `in.jsonl`\n"), std::string::npos) << card;
  EXPECT_NE(card.find("    - **tokenizer\\_path**: `tok.model`\n"), std::string::npos) << card;
  EXPECT_EQ(card.find("/home/"), std::string::npos) << card;  // file names, not folders
  EXPECT_EQ(card.find("/models/"), std::string::npos) << card;
  EXPECT_EQ(card.find("/data/"), std::string::npos) << card;
}

TEST(ExportHubTest, KeepPutsTheReasoningInTheAnswer) {
  const std::string dir = test::make_temp_dir("export_hub_keep");
  const auto job = JobStore::open(write_hub_test_job(dir));
  ExportOptions options;
  options.reasoning = ReasoningExport::Keep;
  export_job_hub(*job, dir + "/hub", options);
  const std::string jsonl = test::read_file(dir + "/hub/data/train.jsonl");
  EXPECT_NE(jsonl.find("{\"content\":\"<think>\\n2+3\\n</think>\\n\\n5\",\"role\":\"assistant\"}],"
                       "\"reasoning\":null"),
            std::string::npos)
      << jsonl;
  EXPECT_THROW(export_job_hub(*job, dir + "/hub", options), Error);  // not empty now
  export_job_hub(*job, dir + "/hub", options, /*overwrite=*/true);
}

}  // namespace
}  // namespace sluice
