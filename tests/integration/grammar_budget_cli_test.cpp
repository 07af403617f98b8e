// The grammar budget end to end (engine/grammar/grammar_budget.h): `sluice generate` refuses a
// hostile grammar before the model loads (exit 2, naming the limit) where it once ran for minutes
// and took 12-17 GB; `sluice serve` answers it with a 400 naming the parameter and goes on
// serving; an enum of 10,000 strings, once accepted and then failed on every row, now works.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

const char* const kHostileGbnf = R"(root ::= ((("a"{0,100}){0,100}){0,100}){0,100})";
const char* const kHostileRegex = "((a{0,1000}){0,1000}){0,1000}";

std::string budget_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<std::string> budget_generate_args(const std::string& dir) {
  const std::string input =
      write_input_jsonl(dir, "{\"instruction\": \"Name a thing.\"}\n{\"instruction\": \"Go.\"}\n");
  return {"generate", "--model",  shared_path(kGgufF32), "--input",
          input,      "--output", dir + "/out.jsonl",    "--quiet"};
}

// A JSON list of 10,000 distinct strings, "w0" ... "w9999".
nlohmann::json ten_thousand_words_json() {
  nlohmann::json words = nlohmann::json::array();
  for (int i = 0; i < 10000; ++i) words.push_back("w" + std::to_string(i));
  return words;
}

TEST(GrammarBudgetCli, GenerateRefusesHostileGrammarsBeforeTheModelLoads) {
  const std::string dir = make_temp_dir("grammar_budget_generate");
  const std::string gbnf = budget_file(dir, "hostile.gbnf", kHostileGbnf);
  const std::string schema = budget_file(
      dir, "hostile.json", nlohmann::json{{"type", "string"}, {"pattern", kHostileRegex}}.dump());
  const std::vector<std::vector<std::string>> cases = {
      {"--grammar", gbnf}, {"--regex", kHostileRegex}, {"--json-schema", schema}};
  for (const auto& grammar_args : cases) {
    std::vector<std::string> args = budget_generate_args(dir);
    args.insert(args.end(), grammar_args.begin(), grammar_args.end());
    const ProcessResult r = run_sluice(args);
    EXPECT_EQ(r.exit_code, 2) << grammar_args[0] << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("too ambiguous")) << grammar_args[0];
    EXPECT_THAT(r.err, HasSubstr("4096")) << grammar_args[0];
  }
}

TEST(GrammarBudgetCli, GenerateWithAnEnumOfTenThousandStringsWritesMembers) {
  const std::string dir = make_temp_dir("grammar_budget_enum");
  const nlohmann::json words = ten_thousand_words_json();
  const std::string schema = budget_file(dir, "enum.json", nlohmann::json{{"enum", words}}.dump());
  std::vector<std::string> args = budget_generate_args(dir);
  args.insert(args.end(),
              {"--json-schema", schema, "--temperature", "1", "--seed", "7", "--max-tokens", "64"});
  const ProcessResult r = run_sluice(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> members(words.begin(), words.end());
  const auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    ASSERT_EQ(row.value("finish_reason", ""), "stop") << row.dump();
    const auto value = nlohmann::json::parse(row["output"].get<std::string>());
    ASSERT_TRUE(value.is_string()) << row.dump();
    EXPECT_TRUE(members.count(value.get<std::string>())) << row.dump();
  }
}

nlohmann::json budget_chat_body(const std::string& structure_key, const nlohmann::json& structure) {
  nlohmann::json body = {{"model", kModel},
                         {"messages", {{{"role", "user"}, {"content", "Say something."}}}},
                         {"max_tokens", 32},
                         {"seed", 1}};
  body[structure_key] = structure;
  return body;
}

TEST(GrammarBudgetCli, ServeAnswersHostileGrammarsWith400AndGoesOn) {
  ServeProcess server;
  const std::vector<std::pair<nlohmann::json, std::string>> hostile = {
      {budget_chat_body("structured_outputs", {{"grammar", kHostileGbnf}}),
       "structured_outputs.grammar"},
      {budget_chat_body("structured_outputs", {{"regex", kHostileRegex}}),
       "structured_outputs.regex"}};
  for (const auto& [body, source] : hostile) {
    const auto [status, answer] = server.post("/v1/chat/completions", body.dump());
    EXPECT_EQ(status, 400) << answer.dump();
    EXPECT_EQ(answer["error"].value("param", ""), "structured_outputs") << answer.dump();
    EXPECT_THAT(answer["error"].value("message", ""), HasSubstr(source + ": rule 'root'"));
    EXPECT_THAT(answer["error"].value("message", ""), HasSubstr("too ambiguous"));
  }
  const nlohmann::json words = ten_thousand_words_json();
  const nlohmann::json format = {
      {"type", "json_schema"}, {"json_schema", {{"name", "word"}, {"schema", {{"enum", words}}}}}};
  const auto [status, answer] =
      server.post("/v1/chat/completions", budget_chat_body("response_format", format).dump());
  ASSERT_EQ(status, 200) << answer.dump();
  const std::string content = answer["choices"][0]["message"]["content"];
  const std::set<std::string> members(words.begin(), words.end());
  EXPECT_TRUE(members.count(nlohmann::json::parse(content).get<std::string>())) << content;
  EXPECT_TRUE(server.is_running());
}

}  // namespace
}  // namespace sluice::test
