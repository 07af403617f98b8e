// `sluice grammar check`: the compile report, texts in a model's tokens or bytes, --json, exit
// codes (0 accepted, 1 refused, 2 usage or input error, 3 grammar refused), and bad input named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

ProcessResult grammar_check(std::vector<std::string> args) {
  args.insert(args.begin(), {"grammar", "check"});
  return run_sluice(args);
}

// One JSON value per line of out.
std::vector<nlohmann::json> grammar_check_json_lines(const std::string& out) {
  std::vector<nlohmann::json> lines;
  for (size_t begin = 0; begin < out.size();) {
    size_t end = out.find('\n', begin);
    if (end == std::string::npos) end = out.size();
    if (end > begin) lines.push_back(nlohmann::json::parse(out.substr(begin, end - begin)));
    begin = end + 1;
  }
  return lines;
}

TEST(GrammarCheckCli, SchemaReportAndTextsInTheModelsTokens) {
  const std::string dir = make_temp_dir("grammar-check");
  const std::string schema = dir + "/s.json";
  write_file(schema,
             R"({"type":"object","properties":{"n":{"type":"integer","maximum":5,"x-unit":"m"}},
                 "required":["n"]})");
  const auto run = grammar_check({"--schema", schema, "--model", shared_path(kGgufF32), "--text",
                                  R"({"n":3})", "--text", R"({"n":9})", "--text", R"({"n":3.0})"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.out, HasSubstr("grammar: json_schema (strict, flexible whitespace)"));
  EXPECT_THAT(run.out, HasSubstr("enforced /: type, properties, required"));
  EXPECT_THAT(run.out, HasSubstr("enforced /properties/n: type, maximum"));
  EXPECT_THAT(run.out, HasSubstr("ignored /properties/n/x-unit: unknown keyword"));
  EXPECT_THAT(run.out, HasSubstr("--text 1: grammar: accepted ("));
  EXPECT_THAT(run.out, HasSubstr("--text 2: grammar: refused at token "));
  EXPECT_THAT(run.out, HasSubstr("schema: invalid: /n: "));
  // 3.0 is an integer for the schema; the grammar writes it as 3.
  EXPECT_THAT(run.out, HasSubstr("schema: valid (a narrowing)"));

  const auto ok =
      grammar_check({"--schema", schema, "--model", shared_path(kGgufF32), "--text", R"({"n":3})"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err << ok.out;
  const auto no_texts = grammar_check({"--schema", schema});
  EXPECT_EQ(no_texts.exit_code, 0) << no_texts.err;
}

TEST(GrammarCheckCli, RefusedSchemaExitsThreeNamingThePointer) {
  const std::string dir = make_temp_dir("grammar-check-refused");
  const std::string schema = dir + "/s.json";
  write_file(schema, R"({"properties":{"a":{"if":{"type":"string"},"then":{"minLength":2}}}})");
  const auto strict = grammar_check({"--schema", schema, "--text", "{}"});
  EXPECT_EQ(strict.exit_code, 3) << strict.err;
  EXPECT_THAT(strict.out, HasSubstr("refused /properties/a/if: "));
  const auto lenient = grammar_check(
      {"--schema", schema, "--schema-mode", "best-effort", "--text", R"({"a":"x"})", "--json"});
  EXPECT_EQ(lenient.exit_code, 0) << lenient.err;
  const std::vector<nlohmann::json> lines = grammar_check_json_lines(lenient.out);
  ASSERT_EQ(lines.size(), 2u) << lenient.out;
  EXPECT_EQ(lines[0]["kind"], "grammar");
  EXPECT_EQ(lines[0]["dropped"][0]["pointer"], "/properties/a/if");
  EXPECT_EQ(lines[1]["kind"], "text");
  EXPECT_EQ(lines[1]["accepted"], true);
  // The grammar no longer holds "then"; the validator still does.
  EXPECT_EQ(lines[1]["schema_valid"], false);
}

TEST(GrammarCheckCli, RegexChoiceAndGbnfByteByByteAndFromFiles) {
  const std::string dir = make_temp_dir("grammar-check-kinds");
  const auto regex =
      grammar_check({"--regex", "[0-9]{3}-[0-9]{4}", "--text", "555-1234", "--text", "55-1234"});
  EXPECT_EQ(regex.exit_code, 1);
  EXPECT_THAT(regex.out, HasSubstr("vocabulary: bytes (no --model"));
  EXPECT_THAT(regex.out, HasSubstr("--text 1: grammar: accepted (8 tokens)"));
  EXPECT_THAT(regex.out, HasSubstr("--text 2: grammar: refused at token 2 (byte 2)"));

  const auto choice = grammar_check(
      {"--choice", "yes", "--choice", "no", "--model", shared_path(kGgufF32), "--text", "no"});
  EXPECT_EQ(choice.exit_code, 0) << choice.out << choice.err;

  write_file(dir + "/g.gbnf", "root ::= \"a\" [b-d]+\n");
  write_file(dir + "/t.txt", "abcd");
  write_file(dir + "/t.jsonl", "{\"output\": \"abd\"}\n\n{\"output\": \"ax\"}\n");
  const auto gbnf = grammar_check({"--gbnf", dir + "/g.gbnf", "--file", dir + "/t.txt", "--jsonl",
                                   dir + "/t.jsonl", "--field", "output"});
  EXPECT_EQ(gbnf.exit_code, 1) << gbnf.err;
  EXPECT_THAT(gbnf.out, HasSubstr("t.txt: grammar: accepted"));
  EXPECT_THAT(gbnf.out, HasSubstr("t.jsonl:1: grammar: accepted"));
  EXPECT_THAT(gbnf.out, HasSubstr("t.jsonl:3: grammar: refused at token 1 (byte 1)"));
}

TEST(GrammarCheckCli, BadInputIsOneLineNamingIt) {
  const std::string dir = make_temp_dir("grammar-check-bad");
  write_file(dir + "/t.jsonl", "{\"a\": 1}\n{\"a\": \n");
  const auto bad_line = grammar_check({"--json-object", "--jsonl", dir + "/t.jsonl"});
  EXPECT_EQ(bad_line.exit_code, 2);
  EXPECT_THAT(bad_line.err, HasSubstr("t.jsonl:2: not valid JSON"));
  const auto no_field =
      grammar_check({"--json-object", "--jsonl", dir + "/t.jsonl", "--field", "b"});
  EXPECT_EQ(no_field.exit_code, 2);
  EXPECT_THAT(no_field.err, HasSubstr("t.jsonl:1: no field 'b'"));
  const auto missing = grammar_check({"--schema", dir + "/none.json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("none.json"));
  EXPECT_EQ(grammar_check({"--regex", "a", "--choice", "b"}).exit_code, 2);
  EXPECT_EQ(grammar_check({"--regex", "a", "--json-whitespace", "tight"}).exit_code, 2);
  const auto bad_regex = grammar_check({"--regex", "(a"});
  EXPECT_EQ(bad_regex.exit_code, 3);
  EXPECT_THAT(bad_regex.out, HasSubstr("error: --regex"));
  const auto bare = run_sluice({"grammar"});
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_THAT(bare.err, HasSubstr("Usage: sluice grammar check"));
}

}  // namespace
}  // namespace sluice::test
