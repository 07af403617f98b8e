// `sluice bench schemas`: the table's counts over a folder of two subsets (compiled share with a
// refused schema, strict and best-effort; rows generated with a model, per whitespace mode), bad
// input named, usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Two subsets of three schemas (c.json of each uses `if`, which strict mode refuses) and a
// folder without schemas.
std::string write_schema_subsets(const std::string& name) {
  const std::string dir = make_temp_dir(name);
  const char* refused = R"({"properties":{"a":{"if":{"type":"string"},"then":{"minLength":2}}}})";
  std::filesystem::create_directories(dir + "/alpha");
  std::filesystem::create_directories(dir + "/beta");
  write_file(
      dir + "/alpha/a.json",
      R"({"type":"object","properties":{"n":{"type":"integer","maximum":5}},"required":["n"]})");
  write_file(dir + "/alpha/b.json", R"({"type":"string","enum":["x","y"]})");
  write_file(dir + "/alpha/c.json", refused);
  write_file(dir + "/beta/a.json", R"({"type":"boolean"})");
  write_file(dir + "/beta/b.json", R"({"type":"integer","minimum":0,"maximum":9})");
  write_file(dir + "/beta/c.json", refused);
  write_file(dir + "/beta/notes.txt", "not a schema: ignored");
  std::filesystem::create_directories(dir + "/gamma");  // no schemas: not a subset
  write_file(dir + "/gamma/readme.md", "no schemas here");
  return dir;
}

// The cells of the table row that starts with "| <subset> | <whitespace> |" (empty when none).
std::vector<std::string> table_row(const std::string& out, const std::string& subset,
                                   const std::string& whitespace) {
  const std::string prefix = "| " + subset + " | " + whitespace + " |";
  const size_t begin = out.find(prefix);
  if (begin == std::string::npos) return {};
  const std::string line = out.substr(begin, out.find('\n', begin) - begin);
  std::vector<std::string> cells;
  size_t start = 1;
  for (size_t bar = line.find('|', start); bar != std::string::npos; bar = line.find('|', start)) {
    std::string cell = line.substr(start, bar - start);
    cell.erase(0, cell.find_first_not_of(' '));
    cell.erase(cell.find_last_not_of(' ') + 1);
    cells.push_back(cell);
    start = bar + 1;
  }
  return cells;
}

TEST(SchemaBenchCli, CompiledShareWithoutAModel) {
  const std::string dir = write_schema_subsets("schema-bench-compile");
  const auto strict = run_sluice({"bench", "schemas", "--dir", dir});
  ASSERT_EQ(strict.exit_code, 0) << strict.err;
  for (const std::string subset : {"alpha", "beta"}) {
    const auto cells = table_row(strict.out, subset, "flexible");
    ASSERT_EQ(cells.size(), 6u) << strict.out;
    EXPECT_EQ(cells[2], "3");
    EXPECT_EQ(cells[3], "66.7%");
  }
  const auto all = table_row(strict.out, "all", "flexible");
  ASSERT_EQ(all.size(), 6u) << strict.out;
  EXPECT_EQ(all[2], "6");
  EXPECT_EQ(all[3], "66.7%");
  EXPECT_THAT(strict.out, HasSubstr("strict mode"));
  EXPECT_THAT(strict.out, Not(HasSubstr("| gamma |")));
  EXPECT_THAT(strict.out, Not(HasSubstr("mask p50")));

  const auto best_effort = run_sluice({"bench", "schemas", "--dir", dir, "--schema-mode",
                                       "best-effort", "--json-whitespace", "compact"});
  ASSERT_EQ(best_effort.exit_code, 0) << best_effort.err;
  const auto compact = table_row(best_effort.out, "all", "compact");
  ASSERT_EQ(compact.size(), 6u) << best_effort.out;
  EXPECT_EQ(compact[3], "100.0%");
  EXPECT_TRUE(table_row(best_effort.out, "all", "flexible").empty());
}

TEST(SchemaBenchCli, RowsPerSchemaWithAModelInBothWhitespaceModes) {
  const std::string dir = write_schema_subsets("schema-bench-generate");
  const auto r = run_sluice({"bench", "schemas", "--dir", dir, "--model", shared_path(kGgufF32),
                             "--rows-per-schema", "3", "--max-tokens", "24", "--json-whitespace",
                             "both", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string whitespace : {"flexible", "compact"}) {
    for (const std::string subset : {"alpha", "beta"}) {
      const auto cells = table_row(r.out, subset, whitespace);
      ASSERT_EQ(cells.size(), 12u) << r.out;
      EXPECT_EQ(cells[3], "66.7%");
      EXPECT_EQ(cells[8], "2");  // the two compiled schemas generate
      EXPECT_EQ(cells[9], "6");  // 3 rows each
    }
    const auto all = table_row(r.out, "all", whitespace);
    ASSERT_EQ(all.size(), 12u) << r.out;
    EXPECT_EQ(all[9], "12");
  }
  // beta's schemas (a boolean, a digit) fit in 24 tokens: every row finishes and is valid.
  const auto beta = table_row(r.out, "beta", "compact");
  EXPECT_EQ(beta[10], "100.0%") << r.out;
  EXPECT_EQ(beta[11], "0.0%") << r.out;
  EXPECT_THAT(r.out, HasSubstr("grammar-complete outputs the validator refused: none"));

  const auto limited = run_sluice({"bench", "schemas", "--dir", dir, "--model",
                                   shared_path(kGgufF32), "--limit", "1", "--max-tokens", "2"});
  ASSERT_EQ(limited.exit_code, 0) << limited.err;
  const auto alpha = table_row(limited.out, "alpha", "flexible");
  ASSERT_EQ(alpha.size(), 12u) << limited.out;
  EXPECT_EQ(alpha[8], "1");
  EXPECT_EQ(alpha[9], "2");  // the default: 2 rows per schema
  // alpha's first schema is an object: 2 tokens cut every row off, invalid but not unsound.
  EXPECT_EQ(alpha[10], "0.0%");
  EXPECT_EQ(alpha[11], "100.0%");
  EXPECT_THAT(limited.out, HasSubstr("grammar-complete outputs the validator refused: none"));
}

TEST(SchemaBenchCli, BadInputIsNamed) {
  const std::string dir = write_schema_subsets("schema-bench-bad");
  write_file(dir + "/alpha/broken.json", "{\"type\": ");
  const auto broken = run_sluice({"bench", "schemas", "--dir", dir});
  ASSERT_EQ(broken.exit_code, 0) << broken.err;
  EXPECT_THAT(broken.err, HasSubstr("alpha/broken.json: not JSON"));
  const auto alpha = table_row(broken.out, "alpha", "flexible");
  ASSERT_EQ(alpha.size(), 6u) << broken.out;
  EXPECT_EQ(alpha[2], "4");
  EXPECT_EQ(alpha[3], "50.0%");

  const std::string flat = make_temp_dir("schema-bench-flat");
  write_file(flat + "/a.json", R"({"type":"boolean"})");
  const auto no_subsets = run_sluice({"bench", "schemas", "--dir", flat});
  EXPECT_EQ(no_subsets.exit_code, 1);
  EXPECT_THAT(no_subsets.err, HasSubstr(flat + ": no subfolder with .json schema files"));
  const auto missing = run_sluice({"bench", "schemas", "--dir", flat + "/nothing"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("nothing: not a folder"));
}

TEST(SchemaBenchCli, UsageErrors) {
  const std::string dir = write_schema_subsets("schema-bench-usage");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"bench", "schemas"},
        {"bench", "schemas", "--dir", dir, "--json-whitespace", "tabs"},
        {"bench", "schemas", "--dir", dir, "--schema-mode", "lenient"},
        {"bench", "schemas", "--dir", dir, "--rows-per-schema", "0"},
        {"bench", "schemas", "--dir", dir, "--tokenizer", "t.model"},
        {"bench", "schemas", "--dir", dir, "--bogus"}}) {
    const auto r = run_sluice(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("sluice bench schemas --help")) << args.back();
  }
}

}  // namespace
}  // namespace sluice::test
