#include "engine/export/exporters.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/core/error.h"
#include "engine/jobs/job_store.h"
#include "engine/jobs/sqlite_db.h"
#include "engine/tokenizer/unicode.h"
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
using test::make_skipped_row;

std::vector<Json> read_jsonl(const std::string& path) {
  std::vector<Json> records;
  std::istringstream in(test::read_file(path));
  std::string line;
  while (std::getline(in, line)) records.push_back(Json::parse(line));
  return records;
}

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.push_back(key);
  return keys;
}

// Rebuilds a RowResult from a jsonl record, reading every key the format documents.
RowResult row_from_jsonl(const Json& record) {
  RowResult row;
  row.row_index = record.at("row_index").get<int64_t>();
  row.line = record.at("line").get<size_t>();
  row.status = parse_row_status(record.at("status").get<std::string>());
  row.input = record.at("input");
  for (const Json& message : record.at("messages"))
    row.messages.push_back(
        {message.at("role").get<std::string>(), message.at("content").get<std::string>()});
  row.prompt = record.at("prompt").get<std::string>();
  row.prompt_tokens = record.at("prompt_tokens").get<int>();
  const auto read_sample = [](const Json& json) {
    SampleResult sample;
    sample.output = json.at("output").get<std::string>();
    sample.output_tokens = json.at("output_tokens").get<int>();
    sample.finish_reason = json.at("finish_reason").get<std::string>();
    sample.output_token_ids = json.at("output_token_ids").get<std::vector<int32_t>>();
    sample.extra = json.at("extra");
    return sample;
  };
  if (record.contains("samples")) {
    for (const Json& sample : record.at("samples")) row.samples.push_back(read_sample(sample));
  } else if (!record.at("output").is_null()) {
    row.samples.push_back(read_sample(record));
  }
  row.seed = record.at("seed").get<uint64_t>();
  row.queue_ms = record.at("queue_ms").get<double>();
  row.ttft_ms = record.at("ttft_ms").get<double>();
  row.total_ms = record.at("total_ms").get<double>();
  row.error = record.at("error").get<std::string>();
  return row;
}

TEST(ExportFormat, NamesRoundTripAndUnknownNamesListTheKnownOnes) {
  for (const auto format :
       {ExportFormat::Jsonl, ExportFormat::Csv, ExportFormat::Alpaca, ExportFormat::OpenAiChat,
        ExportFormat::ShareGpt, ExportFormat::DpoPairs})
    EXPECT_EQ(parse_export_format(to_string(format)), format);
  EXPECT_STREQ(to_string(ExportFormat::OpenAiChat), "openai");
  EXPECT_STREQ(to_string(ExportFormat::DpoPairs), "dpo");
  try {
    parse_export_format("xml");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("jsonl, csv, alpaca, openai, sharegpt, dpo"),
              std::string::npos)
        << e.what();
  }
  for (const auto rule : {DpoRule::Longest, DpoRule::Shortest, DpoRule::FirstChosen,
                          DpoRule::LastChosen, DpoRule::Score})
    EXPECT_EQ(parse_dpo_rule(to_string(rule)), rule);
  EXPECT_EQ(parse_dpo_rule("first"), DpoRule::FirstChosen);
  EXPECT_THROW(parse_dpo_rule("best"), Error);
}

TEST(JsonlExport, EveryFieldRoundTripsInTheDocumentedOrder) {
  const test::ExportJob job = test::make_export_job(
      "jsonl", {make_row(0), make_row(1), make_failed_row(2), make_row(3), make_skipped_row(4)});
  const std::string out = job.dir + "/out.jsonl";
  const ExportStats stats = export_job(*job.store, ExportFormat::Jsonl, out);
  EXPECT_EQ(stats.rows_written, 3);
  EXPECT_EQ(stats.rows_skipped, 2);
  const std::vector<Json> records = read_jsonl(out);
  ASSERT_EQ(records.size(), 3u);
  const std::vector<std::string> expected_keys = {
      "row_index",        "line",          "status", "input",         "messages",
      "prompt",           "prompt_tokens", "output", "output_tokens", "finish_reason",
      "output_token_ids", "extra",         "seed",   "queue_ms",      "ttft_ms",
      "total_ms",         "error"};
  EXPECT_EQ(keys_of(records[0]), expected_keys);
  EXPECT_EQ(row_from_jsonl(records[0]), make_row(0));
  EXPECT_EQ(row_from_jsonl(records[1]), make_row(1));
  EXPECT_EQ(row_from_jsonl(records[2]), make_row(3));
}

TEST(JsonlExport, IncludeFailedAddsFailedAndSkippedRowsWithNullOutput) {
  const test::ExportJob job =
      test::make_export_job("jsonl-failed", {make_row(0), make_failed_row(1), make_skipped_row(2)});
  const std::string out = job.dir + "/out.jsonl";
  ExportOptions options;
  options.include_failed = true;
  const ExportStats stats = export_job(*job.store, ExportFormat::Jsonl, out, options);
  EXPECT_EQ(stats.rows_written, 3);
  EXPECT_EQ(stats.rows_skipped, 0);
  const std::vector<Json> records = read_jsonl(out);
  ASSERT_EQ(records.size(), 3u);
  EXPECT_TRUE(records[1]["output"].is_null());
  EXPECT_EQ(records[1]["error"], "prompt is 5000 tokens, longer than max_model_len 4096");
  EXPECT_EQ(row_from_jsonl(records[1]), make_failed_row(1));
  EXPECT_EQ(row_from_jsonl(records[2]), make_skipped_row(2));
}

TEST(JsonlExport, SeveralSamplesGoToASamplesArray) {
  RowResult row = make_row(0);
  SampleResult second = make_sample("second, \"sample\"", 4, "length");
  second.extra = {{"score", -1.5}, {"judge", "gpt"}};
  row.samples.push_back(second);
  const test::ExportJob job = test::make_export_job("jsonl-n2", {row}, /*n=*/2);
  const std::string out = job.dir + "/out.jsonl";
  export_job(*job.store, ExportFormat::Jsonl, out);
  const std::vector<Json> records = read_jsonl(out);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_FALSE(records[0].contains("output"));
  ASSERT_EQ(records[0]["samples"].size(), 2u);
  EXPECT_EQ(row_from_jsonl(records[0]), row);
}

TEST(JsonlExport, InvalidUtf8BecomesReplacementCharacters) {
  RowResult row = make_row(0);
  row.prompt = "bad \xff byte";
  row.error = "cut \xe6\x97";
  const test::ExportJob job = test::make_export_job("jsonl-utf8", {row});
  const std::string out = job.dir + "/out.jsonl";
  export_job(*job.store, ExportFormat::Jsonl, out);
  const std::string text = test::read_file(out);
  EXPECT_TRUE(is_valid_utf8(text));
  const Json record = Json::parse(text);
  EXPECT_EQ(record["prompt"], "bad \xef\xbf\xbd byte");
}

// A small RFC 4180 reader: quoted fields with doubled quotes, commas, CR and LF inside.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      EXPECT_TRUE(field.empty()) << "quote inside an unquoted field at byte " << i;
      in_quotes = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      ++i;
    } else {
      EXPECT_NE(c, '\n') << "bare LF outside quotes at byte " << i;
      field += c;
    }
  }
  EXPECT_FALSE(in_quotes) << "unterminated quoted field";
  EXPECT_TRUE(field.empty() && record.empty()) << "last record lacks CRLF";
  return records;
}

// An Alpaca row has its own "output" (the reference answer): the CSV's "output" column is the
// generated text, and the dataset's answer is kept as "input_<name>". A field already named
// "input_output" keeps its name, so the renamed one is prefixed again.
TEST(CsvExport, DatasetOutputFieldIsKeptAsInputOutput) {
  RowResult row = make_row(0);
  row.input = {{"instruction", "Add 2 and 2"},
               {"input", ""},
               {"output", "4"},
               {"output_1", "four"},
               {"input_output", "already here"}};
  const test::ExportJob job = test::make_export_job("csv-clash", {row});
  const std::string out = job.dir + "/out.csv";
  export_job(*job.store, ExportFormat::Csv, out);
  const auto records = parse_csv(test::read_file(out));
  ASSERT_EQ(records.size(), 2u);
  // Fields in first-seen order; "output" would be "input_output", which the dataset already
  // uses, so it becomes "input_input_output".
  const std::vector<std::string> expected_header = {
      "row_index",      "status",       "instruction", "input",  "input_input_output",
      "input_output_1", "input_output", "prompt",      "output", "output_tokens",
      "finish_reason",  "total_ms"};
  EXPECT_EQ(records[0], expected_header);
  const std::vector<std::string> values = {"0",
                                           "done",
                                           "Add 2 and 2",
                                           "",
                                           "4",
                                           "four",
                                           "already here",
                                           "<s>[INST] Say \"hi\" #0 [/INST]",
                                           "Hi, \"there\"\r\nbye 0",
                                           "9",
                                           "stop",
                                           "100.125"};
  EXPECT_EQ(records[1], values);
}

TEST(CsvExport, ParsesBackWithQuotesCommasAndNewlines) {
  RowResult other = make_row(1);
  other.input = {{"extra_col", Json::array({1, "two"})}, {"prompt", "a field named prompt"}};
  const test::ExportJob job = test::make_export_job("csv", {make_row(0), other, make_failed_row(2)});
  const std::string out = job.dir + "/out.csv";
  const ExportStats stats = export_job(*job.store, ExportFormat::Csv, out);
  EXPECT_EQ(stats.rows_written, 2);
  EXPECT_EQ(stats.rows_skipped, 1);
  const auto records = parse_csv(test::read_file(out));
  ASSERT_EQ(records.size(), 3u);
  const std::vector<std::string> header = {
      "row_index", "status",        "instruction",   "input",
      "id",        "extra_col",     "input_prompt",  "prompt",
      "output",    "output_tokens", "finish_reason", "total_ms"};
  EXPECT_EQ(records[0], header);
  const std::vector<std::string> row0 = {
      "0",    "done",   "Say \"hi\", then\nstop #0",       "ünïcödé, 日本",          "0",
      "",     "",       "<s>[INST] Say \"hi\" #0 [/INST]", "Hi, \"there\"\r\nbye 0", "9",
      "stop", "100.125"};
  EXPECT_EQ(records[1], row0);
  const std::vector<std::string> row1 = {"1",
                                         "done",
                                         "",
                                         "",
                                         "",
                                         "[1,\"two\"]",
                                         "a field named prompt",
                                         "<s>[INST] Say \"hi\" #1 [/INST]",
                                         "Hi, \"there\"\r\nbye 1",
                                         "9",
                                         "stop",
                                         "101.125"};
  EXPECT_EQ(records[2], row1);
}

TEST(CsvExport, ExtraSamplesAndFailedRowsGetTheirColumns) {
  RowResult row = make_row(0);
  row.samples.push_back(make_sample("two", 1));
  row.samples.push_back(make_sample("three", 1));
  row.input = {{"q", "x"}};
  RowResult failed = make_failed_row(1);
  failed.input = {{"q", "y"}};
  const test::ExportJob job = test::make_export_job("csv-n3", {row, failed}, /*n=*/3);
  const std::string out = job.dir + "/out.csv";
  ExportOptions options;
  options.include_failed = true;
  export_job(*job.store, ExportFormat::Csv, out, options);
  const auto records = parse_csv(test::read_file(out));
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0], (std::vector<std::string>{"row_index", "status", "q", "prompt", "output",
                                                  "output_1", "output_2", "output_tokens",
                                                  "finish_reason", "total_ms", "error"}));
  EXPECT_EQ(records[1][4], "Hi, \"there\"\r\nbye 0");
  EXPECT_EQ(records[1][5], "two");
  EXPECT_EQ(records[1][6], "three");
  EXPECT_EQ(records[1][10], "");
  EXPECT_EQ(records[2],
            (std::vector<std::string>{"1", "failed", "y", "too long", "", "", "", "", "", "0.0",
                                      "prompt is 5000 tokens, longer than max_model_len 4096"}));
}

TEST(CsvExport, InvalidUtf8BecomesReplacementCharacters) {
  RowResult row = make_row(0);
  row.prompt = "bad \xff byte, \xc3";
  const test::ExportJob job = test::make_export_job("csv-utf8", {row});
  const std::string out = job.dir + "/out.csv";
  export_job(*job.store, ExportFormat::Csv, out);
  const std::string text = test::read_file(out);
  EXPECT_TRUE(is_valid_utf8(text));
  EXPECT_EQ(parse_csv(text)[1][5], "bad \xef\xbf\xbd byte, \xef\xbf\xbd");
}

TEST(ExportJob, FailureLeavesNoFileBehind) {
  const test::ExportJob job = test::make_export_job("atomic", {make_row(0)});
  const std::string out = job.dir + "/no-such-dir/out.jsonl";
  EXPECT_THROW(export_job(*job.store, ExportFormat::Jsonl, out), Error);
  EXPECT_FALSE(std::filesystem::exists(job.dir + "/no-such-dir"));
}

TEST(ExportJob, ReplacesAnOlderExportAndLeavesNoTemporaryFile) {
  const test::ExportJob job = test::make_export_job("replace", {make_row(0)});
  const std::string out = job.dir + "/out.jsonl";
  test::write_file(out, "old content\n");
  export_job(*job.store, ExportFormat::Jsonl, out);
  EXPECT_EQ(read_jsonl(out).size(), 1u);
  for (const auto& entry : std::filesystem::directory_iterator(job.dir))
    EXPECT_EQ(entry.path().string().find(".partial"), std::string::npos) << entry.path();
}

// One damaged row must not keep the good ones from export: every format writes them, leaves the
// bad one out and names it with its error.
TEST(ExportJob, UnreadableRowIsLeftOutAndNamedWhileTheOthersExport) {
  for (const ExportFormat format : {ExportFormat::Jsonl, ExportFormat::Csv, ExportFormat::Alpaca,
                                    ExportFormat::OpenAiChat, ExportFormat::ShareGpt}) {
    SCOPED_TRACE(to_string(format));
    const test::ExportJob job =
        test::make_export_job("unreadable", {make_row(0), make_row(1), make_row(2)});
    {
      SqliteDb db(job.store->path(), SqliteDb::Mode::OpenExisting);
      db.exec("UPDATE rows SET messages = 'not json' WHERE row_index = 1");
    }
    const std::string out = job.dir + "/out";
    const ExportStats stats = export_job(*job.store, format, out);
    EXPECT_EQ(stats.rows_written, 2);
    EXPECT_EQ(stats.rows_skipped, 1);
    ASSERT_EQ(stats.unreadable_rows.size(), 1u);
    EXPECT_EQ(stats.unreadable_rows[0].row_index, 1);
    EXPECT_NE(stats.unreadable_rows[0].error.find("row 1, column messages"), std::string::npos)
        << stats.unreadable_rows[0].error;
    EXPECT_EQ(describe_left_out(stats), "1 row left out: 1 unreadable");
    EXPECT_TRUE(std::filesystem::exists(out));
  }
}

TEST(JsonlExport, CountsWhyRowsAreLeftOut) {
  const test::ExportJob job = test::make_export_job(
      "why", {make_row(0), make_failed_row(1), make_skipped_row(2), make_failed_row(3)});
  const ExportStats stats = export_job(*job.store, ExportFormat::Jsonl, job.dir + "/out.jsonl");
  EXPECT_EQ(stats.rows_written, 1);
  EXPECT_EQ(stats.rows_skipped, 3);
  using Reasons = std::vector<std::pair<std::string, int64_t>>;
  EXPECT_EQ(stats.left_out, (Reasons{{"failed", 2}, {"skipped", 1}}));
  EXPECT_EQ(describe_left_out(stats), "3 rows left out: 2 failed, 1 skipped");
}

}  // namespace
}  // namespace sluice
