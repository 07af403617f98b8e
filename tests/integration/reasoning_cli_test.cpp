// `sluice generate` with a thinking model's chat template on stories260K: the reasoning is kept
// apart from the answer in every output row, a budget closes it, a JSON-schema job gives valid
// JSON answers after free reasoning, thinking off gives no reasoning, and bad controls are usage
// errors naming the option. The template ends its generation prompt inside "<think>" as the
// DeepSeek-R1 distills' does, so every output starts in the reasoning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

constexpr const char* kThinkingTemplate =
    "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    "{% if add_generation_prompt %}assistant:"
    "{% if enable_thinking is defined and not enable_thinking %} <think>\n\n</think>\n\n"
    "{% else %} <think>\n{% endif %}{% endif %}";

struct ThinkingJob {
  std::string dir = make_temp_dir("reasoning_cli");
  std::string input;
  std::string chat_template;

  ThinkingJob() {
    std::string jsonl;
    for (const char* p : {"Tell me about a cat.", "Write a story.", "Who is Lily?",
                          "Describe the park.", "What did Tom eat?", "Name a color."}) {
      jsonl += nlohmann::json{{"instruction", p}}.dump() + "\n";
    }
    input = write_input_jsonl(dir, jsonl);
    chat_template = dir + "/thinking.jinja";
    write_file(chat_template, kThinkingTemplate);
  }

  ProcessResult run(const std::string& output, const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {
        "generate", "--model",         shared_path(kGgufF32), "--input",       input, "--output",
        output,     "--chat-template", chat_template,         "--temperature", "1",   "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_sluice(args);
  }
};

TEST(ReasoningCli, ABudgetKeepsTheReasoningApartAndBounded) {
  const ThinkingJob job;
  const std::string out = job.dir + "/budget.jsonl";
  ProcessResult r = job.run(out, {"--reasoning-budget", "16", "--max-tokens", "48"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = read_jsonl(out);
  ASSERT_EQ(rows.size(), 6u);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.dump());
    ASSERT_TRUE(row.contains("reasoning"));
    EXPECT_FALSE(row["reasoning"].get<std::string>().empty());
    EXPECT_LE(row["reasoning_tokens"].get<int>(), 16);
    EXPECT_EQ(row["output"].get<std::string>().find("</think>"), std::string::npos);
    EXPECT_EQ(row["reasoning"].get<std::string>().find("<think>"), std::string::npos);
  }
}

TEST(ReasoningCli, AJsonSchemaJobGivesValidJsonAnswersAfterFreeReasoning) {
  const ThinkingJob job;
  write_file(job.dir + "/s.json",
             R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},)"
             R"("age":{"type":"integer","minimum":0}},"required":["name","age"]})");
  int num_finished = 0;
  for (const char* seed : {"1", "2"}) {
    const std::string out = job.dir + "/schema-" + seed + ".jsonl";
    ProcessResult r = job.run(out, {"--json-schema", job.dir + "/s.json", "--reasoning-budget",
                                    "12", "--max-tokens", "160", "--seed", seed});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& row : read_jsonl(out)) {
      SCOPED_TRACE(row.dump());
      EXPECT_FALSE(row["reasoning"].get<std::string>().empty());
      if (row["finish_reason"] != "stop") continue;
      EXPECT_EQ(row["valid"], true);
      const auto answer = nlohmann::json::parse(row["output"].get<std::string>());
      EXPECT_TRUE(answer.at("name").is_string());
      EXPECT_TRUE(answer.at("age").is_number_integer());
      ++num_finished;
    }
  }
  EXPECT_GE(num_finished, 8);
}

TEST(ReasoningCli, ThinkingOffGivesAnswersOnly) {
  const ThinkingJob job;
  const std::string out = job.dir + "/off.jsonl";
  ProcessResult r = job.run(out, {"--thinking", "off", "--max-tokens", "12"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& row : read_jsonl(out)) {
    EXPECT_FALSE(row.contains("reasoning")) << row.dump();
    EXPECT_THAT(row["prompt"].get<std::string>(), HasSubstr("<think>\n\n</think>\n\n"));
  }
}

TEST(ReasoningCli, BadControlsAreUsageErrors) {
  const ThinkingJob job;
  const std::string out = job.dir + "/bad.jsonl";
  ProcessResult r = job.run(out, {"--thinking", "maybe"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--thinking takes on or off, not 'maybe'"));
  r = job.run(out, {"--reasoning-effort", "max"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--reasoning-effort takes low, medium or high, not 'max'"));
  r = job.run(out, {"--reasoning-format", "xml"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--reasoning-format takes auto"));
}

}  // namespace
}  // namespace sluice::test
