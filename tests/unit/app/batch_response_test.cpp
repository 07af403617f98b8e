#include "app/batch_response.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/export/export_openai_batch.h"
#include "engine/export/exporters.h"
#include "tests/unit/jobs/export_job.h"

namespace sluice {
namespace {

using PlainJson = nlohmann::json;

std::vector<PlainJson> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<PlainJson> out;
  for (std::string line; std::getline(in, line);) out.push_back(PlainJson::parse(line));
  return out;
}

// A stored batch row: its index (line = index + 1), status and input line.
RowResult batch_result(int64_t row_index, RowStatus status, const char* input) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.status = status;
  row.input = nlohmann::ordered_json::parse(input);
  return row;
}

RowResult chat_row() {
  RowResult row = batch_result(0, RowStatus::Done, R"({"custom_id": "first", "method": "POST",
      "url": "/v1/chat/completions",
      "body": {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}], "n": 2}})");
  row.prompt_tokens = 5;
  row.samples = {test::make_sample("Hello", 2, "stop"),
                 test::make_sample("Hey there", 4, "length")};
  return row;
}

RowResult text_row() {
  RowResult row = batch_result(1, RowStatus::Done, R"({"custom_id": "second", "method": "POST",
      "url": "/v1/completions", "body": {"model": "gpt-y", "prompt": "Once"}})");
  row.prompt_tokens = 2;
  row.samples = {test::make_sample(" upon", 1, "length")};
  return row;
}

RowResult refused_row() {
  RowResult row = batch_result(2, RowStatus::Skipped, R"({"custom_id": "third", "method": "POST",
      "url": "/v1/embeddings", "body": {}})");
  row.error = "in.jsonl:3: batch line 'third': url \"/v1/embeddings\" is not supported";
  return row;
}

TEST(BatchResponse, ExportWritesTheBatchOutputFormat) {
  test::ExportJob job = test::make_export_job("batch", {chat_row(), text_row(), refused_row()});
  const std::string path = job.dir + "/out.jsonl";
  const ExportStats stats =
      export_job(*job.store, ExportFormat::OpenAiBatch, path, with_batch_responses({}));
  EXPECT_EQ(stats.rows_written, 3);
  const std::vector<PlainJson> lines = read_lines(path);
  ASSERT_EQ(lines.size(), 3u);
  const std::string id0 = batch_request_id(job.store->info(), 0);
  const std::string id1 = batch_request_id(job.store->info(), 1);
  ASSERT_EQ(id0.size(), 32u);
  EXPECT_NE(id0, id1);
  const int64_t created = epoch_seconds_of(job.store->info().created_at);
  EXPECT_GT(created, 1'600'000'000);
  const PlainJson expected_chat = {
      {"id", "batch_req_" + id0},
      {"custom_id", "first"},
      {"response",
       {{"status_code", 200},
        {"request_id", id0},
        {"body",
         {{"id", "chatcmpl-" + id0},
          {"object", "chat.completion"},
          {"created", created},
          {"model", "gpt-x"},
          {"choices",
           {{{"index", 0},
             {"message", {{"role", "assistant"}, {"content", "Hello"}}},
             {"logprobs", nullptr},
             {"finish_reason", "stop"}},
            {{"index", 1},
             {"message", {{"role", "assistant"}, {"content", "Hey there"}}},
             {"logprobs", nullptr},
             {"finish_reason", "length"}}}},
          {"usage", {{"prompt_tokens", 5}, {"completion_tokens", 6}, {"total_tokens", 11}}}}}}},
      {"error", nullptr}};
  EXPECT_EQ(lines[0], expected_chat) << lines[0].dump(2);
  const PlainJson expected_text = {
      {"id", "batch_req_" + id1},
      {"custom_id", "second"},
      {"response",
       {{"status_code", 200},
        {"request_id", id1},
        {"body",
         {{"id", "cmpl-" + id1},
          {"object", "text_completion"},
          {"created", created},
          {"model", "gpt-y"},
          {"choices",
           {{{"index", 0}, {"text", " upon"}, {"logprobs", nullptr}, {"finish_reason", "length"}}}},
          {"usage", {{"prompt_tokens", 2}, {"completion_tokens", 1}, {"total_tokens", 3}}}}}}},
      {"error", nullptr}};
  EXPECT_EQ(lines[1], expected_text) << lines[1].dump(2);
  const PlainJson expected_error = {
      {"id", "batch_req_" + batch_request_id(job.store->info(), 2)},
      {"custom_id", "third"},
      {"response", nullptr},
      {"error",
       {{"code", "invalid_request"},
        {"message", "in.jsonl:3: batch line 'third': url \"/v1/embeddings\" is not supported"}}}};
  EXPECT_EQ(lines[2], expected_error) << lines[2].dump(2);
  // The ids are stable: a second export of the job writes the same lines.
  export_job(*job.store, ExportFormat::OpenAiBatch, path, with_batch_responses({}));
  EXPECT_EQ(read_lines(path), lines);
}

TEST(BatchResponse, ExportWithoutABodyBuilderIsRefused) {
  test::ExportJob job = test::make_export_job("batch-none", {text_row()});
  EXPECT_THROW(export_job(*job.store, ExportFormat::OpenAiBatch, job.dir + "/out.jsonl"), Error);
}

TEST(BatchResponse, EpochSecondsOfIsoTimes) {
  EXPECT_EQ(epoch_seconds_of("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(epoch_seconds_of("2025-01-31T12:00:00Z"), 1738324800);
  EXPECT_EQ(epoch_seconds_of("not a time"), 0);
}

}  // namespace
}  // namespace sluice
