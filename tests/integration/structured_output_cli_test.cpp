// `sluice generate` with structured output on stories260K at temperature 1: every finished row
// of the schema corpus (tests/data/schemas) validates against its schema by an independent
// validator (Python's jsonschema, tests/integration/validate_schema_outputs.py); regex, choice
// and GBNF rows match; a bad grammar is a usage error naming the keyword; resume keeps it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/regex_grammar.h"
#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

std::string input_rows(const std::string& dir, int num_rows) {
  std::string jsonl;
  const char* prompts[] = {"Tell me about a cat.", "Write a story.",    "Who is Lily?",
                           "Describe the park.",   "What did Tom eat?", "Name a color."};
  for (int i = 0; i < num_rows; ++i) {
    jsonl += nlohmann::json{{"instruction", prompts[i % 6]}}.dump() + "\n";
  }
  return write_input_jsonl(dir, jsonl);
}

std::vector<std::string> generate_args(const std::string& input, const std::string& output) {
  return {"generate", "--model", shared_path(kGgufF32), "--input", input,
          "--output", output,    "--temperature",       "1",       "--quiet"};
}

ProcessResult generate(std::vector<std::string> args, const std::vector<std::string>& extra) {
  args.insert(args.end(), extra.begin(), extra.end());
  return run_sluice(args);
}

TEST(StructuredOutputCli, SchemaCorpusOutputsValidateIndependently) {
  const std::string dir = make_temp_dir("schema_corpus");
  const std::string input = input_rows(dir, 6);
  std::vector<std::string> schemas;
  for (const auto& entry :
       std::filesystem::directory_iterator(source_dir() + "/tests/data/schemas")) {
    schemas.push_back(entry.path().string());
  }
  std::sort(schemas.begin(), schemas.end());
  ASSERT_GE(schemas.size(), 40u);
  std::vector<std::string> validate = {
      "/usr/bin/python3", source_dir() + "/tests/integration/validate_schema_outputs.py"};
  for (const std::string& schema : schemas) {
    for (const char* seed : {"1", "2"}) {
      const std::string output =
          str_cat(dir, "/", std::filesystem::path(schema).stem().string(), "-", seed, ".jsonl");
      ProcessResult r = generate(generate_args(input, output),
                                 {"--json-schema", schema, "--seed", seed, "--max-tokens", "400"});
      ASSERT_EQ(r.exit_code, 0) << schema << "\n" << r.err;
      validate.push_back(schema);
      validate.push_back(output);
    }
  }
  ProcessResult check = run_process(validate);
  ASSERT_EQ(check.exit_code, 0) << check.out << check.err;
  auto summary = nlohmann::json::parse(check.out);
  const int rows = summary["rows"], finished = summary["finished"];
  EXPECT_EQ(rows, static_cast<int>(schemas.size()) * 2 * 6);
  EXPECT_GE(finished * 10, rows * 8) << check.out;  // most rows finish within 400 tokens
}

TEST(StructuredOutputCli, RegexChoiceAndGbnfRowsMatch) {
  const std::string dir = make_temp_dir("structured_kinds");
  const std::string input = input_rows(dir, 6);
  const std::string regex = " [A-Z][a-z]{1,8} (is|was) [0-9]{1,3}\\.";
  ProcessResult r = generate(generate_args(input, dir + "/regex.jsonl"), {"--regex", regex});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Grammar regex_g = regex_grammar(regex, "re");
  for (const auto& row : read_jsonl(dir + "/regex.jsonl")) {
    EXPECT_EQ(row["finish_reason"], "stop");
    EXPECT_EQ(row["valid"], true);
    EXPECT_TRUE(grammar_accepts_text(regex_g, row["output"].get<std::string>())) << row["output"];
  }
  r = generate(generate_args(input, dir + "/choice.jsonl"),
               {"--choice", " Once upon a time", "--choice", " The end", "--choice", " Lily, yes"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& row : read_jsonl(dir + "/choice.jsonl")) {
    const std::string out = row["output"];
    EXPECT_TRUE(out == " Once upon a time" || out == " The end" || out == " Lily, yes") << out;
  }
  const std::string gbnf =
      "root ::= \" \" name \" loves \" thing \".\"\n"
      "name ::= \"Lily\" | \"Tom\" | \"Ж\" [а-я]{1,4}\n"
      "thing ::= [a-z]+ ( \" and \" [a-z]+ )?\n";
  write_file(dir + "/g.gbnf", gbnf);
  r = generate(generate_args(input, dir + "/gbnf.jsonl"),
               {"--grammar", dir + "/g.gbnf", "--max-tokens", "300"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Grammar gbnf_g = parse_gbnf(gbnf, "g.gbnf");
  for (const auto& row : read_jsonl(dir + "/gbnf.jsonl")) {
    const bool valid = grammar_accepts_text(gbnf_g, row["output"].get<std::string>());
    EXPECT_EQ(row["valid"], valid);
    EXPECT_EQ(valid, row["finish_reason"] == "stop") << row["output"];
  }
}

// The job keeps each row's validity as judged when it finished (by the schema's validator), and
// the job's JSONL export carries it.
TEST(StructuredOutputCli, TheJobKeepsEachRowsValidity) {
  const std::string dir = make_temp_dir("structured_kept");
  const std::string input = input_rows(dir, 4);
  write_file(
      dir + "/s.json",
      R"({"type":"object","properties":{"a":{"type":"string","maxLength":6}},"required":["a"]})");
  const std::string job = dir + "/j.sluicejob";
  ProcessResult r =
      generate(generate_args(input, dir + "/out.jsonl"),
               {"--json-schema", dir + "/s.json", "--job", job, "--max-tokens", "60"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_sluice({"jobs", "export", job, "--format", "jsonl", "--output", dir + "/export.jsonl"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto generated = read_jsonl(dir + "/out.jsonl");
  const auto exported = read_jsonl(dir + "/export.jsonl");
  ASSERT_EQ(exported.size(), 4u);
  for (size_t i = 0; i < exported.size(); ++i) {
    SCOPED_TRACE(exported[i].dump());
    ASSERT_TRUE(exported[i].contains("valid"));
    EXPECT_EQ(exported[i]["valid"], generated[i]["valid"]);
    EXPECT_EQ(exported[i]["valid"], exported[i]["finish_reason"] == "stop");
    if (exported[i]["valid"] == false) {
      EXPECT_FALSE(exported[i]["invalid_reason"].get<std::string>().empty());
    }
  }
}

TEST(StructuredOutputCli, CutOffRowIsMarkedInvalid) {
  const std::string dir = make_temp_dir("structured_cut");
  const std::string input = input_rows(dir, 2);
  write_file(dir + "/s.json",
             R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})");
  ProcessResult r = generate(generate_args(input, dir + "/out.jsonl"),
                             {"--json-schema", dir + "/s.json", "--max-tokens", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const auto& row : read_jsonl(dir + "/out.jsonl")) {
    EXPECT_EQ(row["finish_reason"], "length");
    EXPECT_EQ(row["valid"], false);
  }
}

TEST(StructuredOutputCli, BadGrammarsAreUsageErrorsNamingTheProblem) {
  const std::string dir = make_temp_dir("structured_bad");
  const std::string input = input_rows(dir, 1);
  const std::string out = dir + "/out.jsonl";
  write_file(dir + "/s.json",
             R"({"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}}})");
  ProcessResult r = generate(generate_args(input, out), {"--json-schema", dir + "/s.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("/properties/n/multipleOf: unsupported keyword 'multipleOf'"));
  write_file(dir + "/g.gbnf", "root ::= \"a\"\nthing ::= [z-a]\n");
  r = generate(generate_args(input, out), {"--grammar", dir + "/g.gbnf"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("g.gbnf:2:12: character range is reversed"));
  r = generate(generate_args(input, out), {"--regex", "a(?=b)"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("lookahead"));
  r = generate(generate_args(input, out), {"--regex", "a", "--choice", "b"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not both"));
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(StructuredOutputCli, ResumeKeepsTheGrammar) {
  const std::string dir = make_temp_dir("structured_resume");
  const std::string input = input_rows(dir, 4);
  write_file(dir + "/s.json", R"({"enum":[" red"," green"]})");
  ProcessResult r = generate(generate_args(input, dir + "/first.jsonl"),
                             {"--json-schema", dir + "/s.json", "--job", dir + "/j.sluicejob"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::filesystem::remove(dir + "/s.json");  // the job keeps the schema's text
  r = run_sluice(
      {"generate", "--resume", dir + "/j.sluicejob", "--output", dir + "/again.jsonl", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = read_jsonl(dir + "/again.jsonl");
  ASSERT_EQ(rows.size(), 4u);
  for (const auto& row : rows) {
    EXPECT_EQ(row["valid"], true);
    EXPECT_TRUE(row["output"] == "\" red\"" || row["output"] == " \" red\"" ||
                row["output"] == "\" green\"" || row["output"] == " \" green\"")
        << row["output"];
  }
}

// --schema-column: each row's output follows the schema in its own field (an object, or a
// string holding one), checked by the independent validator row by row; a row whose schema
// does not compile fails naming the file, line and column; resume keeps the column.
TEST(StructuredOutputCli, EachRowFollowsTheSchemaInItsColumn) {
  const std::string dir = make_temp_dir("schema_column");
  const std::vector<nlohmann::json> schemas = {
      nlohmann::json::parse(R"({"type": "object", "properties": {"name": {"enum": ["x", "y"]},
          "age": {"type": "integer", "minimum": 0}}, "required": ["name", "age"],
          "additionalProperties": false})"),
      nlohmann::json::parse(
          R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})"),
      nlohmann::json::parse(R"({"enum": [" red", " green"]})")};
  std::string jsonl;
  jsonl += nlohmann::json{{"instruction", "Who?"}, {"schema", schemas[0]}}.dump() + "\n";
  jsonl += nlohmann::json{{"instruction", "Count."}, {"schema", schemas[1].dump()}}.dump() + "\n";
  jsonl += nlohmann::json{{"instruction", "Colour?"}, {"schema", schemas[2]}}.dump() + "\n";
  jsonl += R"({"instruction": "Bad.", "schema": {"type": "frobnicate"}})"
           "\n";
  const std::string input = write_input_jsonl(dir, jsonl);
  const std::string job = dir + "/j.sluicejob";
  ProcessResult r =
      generate(generate_args(input, dir + "/out.jsonl"),
               {"--schema-column", "schema", "--seed", "3", "--max-tokens", "300", "--job", job});
  ASSERT_EQ(r.exit_code, 3) << r.err;  // one row failed
  auto rows = read_jsonl(dir + "/out.jsonl");
  ASSERT_EQ(rows.size(), 4u);
  std::vector<std::string> validate = {
      "/usr/bin/python3", source_dir() + "/tests/integration/validate_schema_outputs.py"};
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(rows[i]["finish_reason"], rows[i]["valid"] == true ? "stop" : "length") << rows[i];
    const std::string schema_path = str_cat(dir, "/schema", i, ".json");
    const std::string row_path = str_cat(dir, "/row", i, ".jsonl");
    write_file(schema_path, schemas[i].dump());
    write_file(row_path, rows[i].dump() + "\n");
    validate.push_back(schema_path);
    validate.push_back(row_path);
  }
  ProcessResult check = run_process(validate);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_EQ(rows[3]["finish_reason"], "error");
  EXPECT_EQ(rows[3]["valid"], false);
  EXPECT_THAT(rows[3]["error"].get<std::string>(), HasSubstr(input + ":4: column 'schema'"));
  EXPECT_THAT(rows[3]["error"].get<std::string>(), HasSubstr("frobnicate"));

  // The job keeps the column: a resumed job's export says the same.
  r = run_sluice({"generate", "--resume", job, "--output", dir + "/again.jsonl", "--quiet"});
  ASSERT_EQ(r.exit_code, 3) << r.err;  // the failed row is still failed
  EXPECT_EQ(read_jsonl(dir + "/again.jsonl"), rows);

  // A column the rows do not have, or a grammar beside it, is refused before any row runs.
  r = generate(generate_args(input, dir + "/none.jsonl"), {"--schema-column", "shema"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("no column 'shema'"));
  EXPECT_THAT(r.err, HasSubstr("instruction, schema"));
  r = generate(generate_args(input, dir + "/both.jsonl"),
               {"--schema-column", "schema", "--json-object"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--schema-column"));
}

}  // namespace
}  // namespace sluice::test
