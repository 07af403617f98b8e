#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/export_job.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;
using test::make_failed_row;
using test::make_job_info;
using test::make_row;
using test::make_sample;

// A row from a plain prompt template: no conversation, no "instruction" field.
RowResult plain_prompt_row(int64_t row_index) {
  RowResult row;
  row.row_index = row_index;
  row.line = 9;
  row.input = {{"text", "Once upon a time"}};
  row.prompt = "Once upon a time";
  row.samples = {make_sample(" there was a fox.", 5)};
  return row;
}

// A chat row whose instruction is the last user turn of a multi-turn conversation.
RowResult chat_row(int64_t row_index) {
  RowResult row;
  row.row_index = row_index;
  row.input = {{"conversations", Json::array()}};
  row.messages = {{"system", "You are terse."},
                  {"user", "Name a colour."},
                  {"assistant", "Blue."},
                  {"user", "Another?"}};
  row.prompt = "<rendered>";
  row.samples = {make_sample("Green.", 2)};
  return row;
}

TEST(AlpacaExport, InstructionComesFromFieldsThenLastUserTurnThenPrompt) {
  const test::ExportJob job =
      test::make_export_job("chat-alpaca", {make_row(0), make_failed_row(1), plain_prompt_row(2), chat_row(3)});
  const std::string out = job.dir + "/out.json";
  const ExportStats stats = export_job(*job.store, ExportFormat::Alpaca, out);
  EXPECT_EQ(stats.rows_written, 3);
  EXPECT_EQ(stats.rows_skipped, 1);
  const Json records = Json::parse(test::read_file(out));
  ASSERT_TRUE(records.is_array());
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], Json({{"instruction", "Say \"hi\", then\nstop #0"},
                              {"input", "ünïcödé, 日本"},
                              {"output", "Hi, \"there\"\r\nbye 0"}}));
  EXPECT_EQ(
      records[1],
      Json({{"instruction", "Once upon a time"}, {"input", ""}, {"output", " there was a fox."}}));
  EXPECT_EQ(records[2], Json({{"instruction", "Another?"}, {"input", ""}, {"output", "Green."}}));
}

TEST(AlpacaExport, EmptyJobIsAnEmptyArray) {
  const test::ExportJob job = test::make_export_job("chat-alpaca-empty", {make_failed_row(0)});
  const std::string out = job.dir + "/out.json";
  export_job(*job.store, ExportFormat::Alpaca, out);
  EXPECT_EQ(Json::parse(test::read_file(out)), Json::array());
}

TEST(AlpacaExport, SeveralSamplesExportSampleZero) {
  RowResult row = make_row(0);
  row.samples.push_back(make_sample("other", 1));
  const test::ExportJob job = test::make_export_job("chat-alpaca-n2", {row}, 2);
  const std::string out = job.dir + "/out.json";
  export_job(*job.store, ExportFormat::Alpaca, out);
  const Json records = Json::parse(test::read_file(out));
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["output"], "Hi, \"there\"\r\nbye 0");
}

std::vector<Json> read_chat_jsonl(const std::string& path) {
  std::vector<Json> records;
  std::istringstream in(test::read_file(path));
  std::string line;
  while (std::getline(in, line)) records.push_back(Json::parse(line));
  return records;
}

TEST(OpenAiChatExport, ConversationPlusAssistantTurnPerSample) {
  RowResult row = chat_row(0);
  row.samples.push_back(make_sample("Red.", 2, "length"));
  const test::ExportJob job = test::make_export_job("chat-openai", {row, make_failed_row(1), plain_prompt_row(2)}, 2);
  const std::string out = job.dir + "/out.jsonl";
  const ExportStats stats = export_job(*job.store, ExportFormat::OpenAiChat, out);
  EXPECT_EQ(stats.rows_written, 2);
  EXPECT_EQ(stats.rows_skipped, 1);
  EXPECT_EQ(stats.records_written, 3);
  const std::vector<Json> records = read_chat_jsonl(out);
  ASSERT_EQ(records.size(), 3u);
  const Json conversation = Json::parse(R"([
      {"role": "system", "content": "You are terse."},
      {"role": "user", "content": "Name a colour."},
      {"role": "assistant", "content": "Blue."},
      {"role": "user", "content": "Another?"}])");
  Json first = conversation;
  first.push_back({{"role", "assistant"}, {"content", "Green."}});
  Json second = conversation;
  second.push_back({{"role", "assistant"}, {"content", "Red."}});
  EXPECT_EQ(records[0], Json({{"messages", first}}));
  EXPECT_EQ(records[1], Json({{"messages", second}}));
  EXPECT_EQ(records[2], Json::parse(R"({"messages": [
      {"role": "user", "content": "Once upon a time"},
      {"role": "assistant", "content": " there was a fox."}]})"));
}

TEST(ShareGptExport, RolesBecomeHumanGptSystem) {
  RowResult row = chat_row(4);
  row.samples.push_back(make_sample("Red.", 2));
  const test::ExportJob job = test::make_export_job("chat-sharegpt", {plain_prompt_row(2), row}, 2);
  const std::string out = job.dir + "/out.json";
  const ExportStats stats = export_job(*job.store, ExportFormat::ShareGpt, out);
  EXPECT_EQ(stats.rows_written, 2);
  EXPECT_EQ(stats.records_written, 3);
  const Json records = Json::parse(test::read_file(out));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], Json::parse(R"({"id": "2", "conversations": [
      {"from": "human", "value": "Once upon a time"},
      {"from": "gpt", "value": " there was a fox."}]})"));
  const Json turns = Json::parse(R"([
      {"from": "system", "value": "You are terse."},
      {"from": "human", "value": "Name a colour."},
      {"from": "gpt", "value": "Blue."},
      {"from": "human", "value": "Another?"}])");
  Json first = turns;
  first.push_back({{"from", "gpt"}, {"value", "Green."}});
  Json second = turns;
  second.push_back({{"from", "gpt"}, {"value", "Red."}});
  EXPECT_EQ(records[1], Json({{"id", "4-0"}, {"conversations", first}}));
  EXPECT_EQ(records[2], Json({{"id", "4-1"}, {"conversations", second}}));
}

}  // namespace
}  // namespace sluice
