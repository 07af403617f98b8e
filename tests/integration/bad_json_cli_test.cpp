// `sluice generate` and `sluice render-template` on JSON that naive readers get wrong: nesting
// past the depth limit, numbers out of range, and chat files whose first row misleads format
// detection. Each is a bad row (named by file and line, skipped or stopping as asked) or a clear
// error, never a crash or rows silently read as another format.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/jobs/job_store.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

ProcessResult generate(const std::string& input, const std::string& output,
                       std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {
      "generate", "--model", shared_path(kGgufF32), "--input", input, "--output",
      output,     "--quiet", "--max-tokens",        "8"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_sluice(args);
}

std::string deeply_nested_array() {
  return std::string(100000, '[') + std::string(100000, ']');
}

TEST(BadJsonCli, RowNestedPastTheDepthLimitIsABadRow) {
  const std::string dir = make_temp_dir("deep-rows");
  const std::string deep_row = "{\"prompt\": \"x\", \"meta\": " + deeply_nested_array() + "}\n";
  const std::string input = dir + "/in.jsonl";
  // The deep row in the middle and as the last row.
  write_file(input, "{\"prompt\": \"Once\"}\n" + deep_row + "{\"prompt\": \"Then\"}\n" + deep_row);

  const auto skipped = generate(input, dir + "/out.jsonl", {"--on-bad-row", "skip"});
  EXPECT_EQ(skipped.exit_code, 3) << skipped.err.substr(0, 2000);
  EXPECT_THAT(skipped.err, HasSubstr("in.jsonl:2:"));
  EXPECT_THAT(skipped.err, HasSubstr("in.jsonl:4:"));
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 4u);
  for (const size_t i : {1u, 3u}) {
    EXPECT_EQ(rows[i]["status"], "skipped");
    EXPECT_THAT(rows[i]["error"].get<std::string>(),
                HasSubstr("in.jsonl:" + std::to_string(i + 1) + ":"));
    EXPECT_THAT(rows[i]["error"].get<std::string>(), HasSubstr("nested deeper than 256"));
  }
  EXPECT_EQ(rows[0]["output_tokens"], 8);
  EXPECT_EQ(rows[2]["output_tokens"], 8);

  const auto stopped = generate(input, dir + "/stop.jsonl");
  EXPECT_EQ(stopped.exit_code, 1) << stopped.err.substr(0, 2000);
  EXPECT_THAT(stopped.err, HasSubstr("in.jsonl:2:"));
  EXPECT_THAT(stopped.err, HasSubstr("nested deeper than 256"));

  // Only the last row is deep: the default still stops on it, naming it.
  const std::string last_only = dir + "/last.jsonl";
  write_file(last_only, "{\"prompt\": \"Once\"}\n" + deep_row);
  const auto stopped_last = generate(last_only, dir + "/last_out.jsonl");
  EXPECT_EQ(stopped_last.exit_code, 1) << stopped_last.err.substr(0, 2000);
  EXPECT_THAT(stopped_last.err, HasSubstr("last.jsonl:2:"));
}

TEST(BadJsonCli, NumberOutOfRangeIsABadRowNamingTheElementAndLine) {
  const std::string dir = make_temp_dir("big-number");
  const std::string input = dir + "/in.json";
  write_file(input,
             "[\n"
             "{\"prompt\": \"Once\"},\n"
             "{\"prompt\": \"x\", \"n\": 1e400},\n"
             "{\"prompt\": \"Then\"}\n"
             "]\n");

  const auto skipped = generate(input, dir + "/out.jsonl", {"--on-bad-row", "skip"});
  EXPECT_EQ(skipped.exit_code, 3) << skipped.err;
  EXPECT_THAT(skipped.err, Not(HasSubstr("json.exception")));
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1]["status"], "skipped");
  EXPECT_THAT(rows[1]["error"].get<std::string>(), HasSubstr("in.json:3:22: element 2: "));
  EXPECT_THAT(rows[1]["error"].get<std::string>(), HasSubstr("1e400"));
  EXPECT_EQ(rows[0]["output_tokens"], 8);
  EXPECT_EQ(rows[2]["output_tokens"], 8);

  const auto stopped = generate(input, dir + "/stop.jsonl");
  EXPECT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_THAT(stopped.err, HasSubstr("in.json:3:22: element 2: "));
}

TEST(BadJsonCli, OpenAiFileWhoseFirstMessageLacksARoleIsStillReadAsOpenAi) {
  const std::string dir = make_temp_dir("openai-first");
  const std::string input = dir + "/in.jsonl";
  const std::string good =
      "{\"messages\": [{\"role\": \"user\", \"content\": \"Tell a story\"}]}\n";
  write_file(input, "{\"messages\": [{\"content\": \"Tell a story\"}]}\n" + good + good);

  const auto skipped =
      generate(input, dir + "/out.jsonl", {"--on-bad-row", "skip", "--job", dir + "/j.sluicejob"});
  EXPECT_EQ(skipped.exit_code, 3) << skipped.err;
  EXPECT_EQ(JobStore::open(dir + "/j.sluicejob")->info().source_format, "openai");
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["status"], "skipped");
  EXPECT_THAT(rows[0]["error"].get<std::string>(),
              HasSubstr("in.jsonl:1:1: openai row: messages[0] has no string"));
  for (const size_t i : {1u, 2u}) {
    EXPECT_EQ(rows[i]["output_tokens"], 8);
    // The prompt is the conversation, not the record's JSON text.
    EXPECT_THAT(rows[i]["prompt"].get<std::string>(), HasSubstr("Tell a story"));
    EXPECT_THAT(rows[i]["prompt"].get<std::string>(), Not(HasSubstr("\"role\"")));
  }

  const auto stopped = generate(input, dir + "/stop.jsonl");
  EXPECT_EQ(stopped.exit_code, 1) << stopped.err;
  EXPECT_THAT(stopped.err, HasSubstr("in.jsonl:1:1: openai row"));
}

TEST(BadJsonCli, ShareGptArrayWithABadFirstElementLosesOnlyThatRow) {
  const std::string dir = make_temp_dir("sharegpt-first");
  const std::string input = dir + "/in.json";
  const std::string good =
      "{\"conversations\": [{\"from\": \"human\", \"value\": \"Tell a story\"}]}";
  write_file(input, "[{\"conversations\": [\"Tell a story\"]},\n" + good + ",\n" + good + "]\n");

  const auto skipped = generate(input, dir + "/out.jsonl", {"--on-bad-row", "skip"});
  EXPECT_EQ(skipped.exit_code, 3) << skipped.err;
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["status"], "skipped");
  EXPECT_THAT(rows[0]["error"].get<std::string>(),
              HasSubstr("in.json:1:2: element 1: sharegpt row"));
  EXPECT_EQ(rows[1]["output_tokens"], 8);
  EXPECT_EQ(rows[2]["output_tokens"], 8);
}

TEST(BadJsonCli, RenderTemplateMessagesNamePositionAndDepth) {
  const std::string dir = make_temp_dir("render-bad-json");
  const std::string template_path =
      shared_path("chat-templates/Qwen-Qwen2.5-7B-Instruct/template.jinja");
  const std::string messages = dir + "/messages.json";
  write_file(messages, "[\n{\"role\": \"user\", \"content\": \"hi\"},\n]\n");
  const auto syntax =
      run_sluice({"render-template", "--template", template_path, "--messages", messages});
  EXPECT_EQ(syntax.exit_code, 1);
  EXPECT_THAT(syntax.err, HasSubstr("messages.json: not valid JSON at line 3, column 1: "));
  EXPECT_THAT(syntax.err, Not(HasSubstr("json.exception")));

  write_file(messages, "{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}], \"x\": " +
                           deeply_nested_array() + "}");
  const auto deep =
      run_sluice({"render-template", "--template", template_path, "--messages", messages});
  EXPECT_EQ(deep.exit_code, 1) << deep.err.substr(0, 2000);
  EXPECT_THAT(deep.err, HasSubstr("messages.json: not valid JSON at line 1, column "));
  EXPECT_THAT(deep.err, HasSubstr("nested deeper than 256"));
}

}  // namespace
}  // namespace sluice::test
