// --schema-mode and --json-whitespace end to end on stories260K: `sluice generate` refuses a
// schema it cannot enforce exactly before the job file exists unless asked for best-effort, then
// runs it, says what it dropped once per schema, and keeps that in the job (`sluice jobs show`)
// and the options in its parameters (a resume compiles the same grammar); `sluice serve` takes
// them as the requests' defaults, logging what it dropped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "tests/integration/cli_test_util.h"
#include "tests/integration/serve_process.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A schema with a multipleOf no grammar enforces exactly (not whole).
constexpr const char* kHalvesSchema =
    R"({"type":"object","properties":{"n":{"type":"number","multipleOf":0.5}},"required":["n"]})";

std::vector<std::string> mode_generate_args(const std::string& input, const std::string& output,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> args = {
      "generate", "--model", shared_path(kGgufF32), "--input", input,
      "--output", output,    "--max-tokens",        "40",      "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

size_t count_of(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Catches best-effort not reaching the compile (refused like strict), strict no longer refusing
// before the job file, notes not printed, printed per row, or not kept in the job, and a resume
// that compiles in another mode.
TEST(SchemaModeCli, BestEffortRunsWhatStrictRefusesAndTheJobKeepsItsNotes) {
  const std::string dir = make_temp_dir("schema_mode_job");
  const std::string input =
      write_input_jsonl(dir, "{\"instruction\": \"One\"}\n{\"instruction\": \"Two\"}\n");
  write_file(dir + "/s.json", kHalvesSchema);
  const std::string job = dir + "/j.sluicejob";
  ProcessResult r = run_sluice(mode_generate_args(
      input, dir + "/out.jsonl", {"--json-schema", dir + "/s.json", "--job", job}));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/properties/n/multipleOf"));
  EXPECT_FALSE(std::filesystem::exists(job));

  r = run_sluice(mode_generate_args(
      input, dir + "/out.jsonl",
      {"--json-schema", dir + "/s.json", "--job", job, "--schema-mode", "best-effort"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string note = "sluice generate: " + dir + "/s.json: /properties/n/multipleOf";
  EXPECT_EQ(count_of(r.err, note), 1u) << r.err;
  const auto params = JobStore::open(job)->info().params;
  EXPECT_EQ(params["schema_mode"], "best-effort");
  EXPECT_EQ(params["grammar"]["schema_mode"], "best-effort");
  EXPECT_FALSE(params.contains("json_whitespace"));

  const ProcessResult shown = run_sluice({"jobs", "show", job});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("grammar notes"));
  EXPECT_THAT(shown.out, HasSubstr(dir + "/s.json: /properties/n/multipleOf"));

  // A resume compiles the same grammar (strict would refuse it) and runs nothing new.
  r = run_sluice({"generate", "--resume", job, "--output", dir + "/again.jsonl", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_jsonl(dir + "/again.jsonl").size(), 2u);
  r = run_sluice(
      {"generate", "--resume", job, "--output", dir + "/x.jsonl", "--schema-mode", "strict"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("drop --schema-mode"));
}

// Catches a per-row schema compiled in the default mode, and its notes printed per row.
TEST(SchemaModeCli, RowSchemasTakeTheModeAndAreNotedOncePerSchema) {
  const std::string dir = make_temp_dir("schema_mode_rows");
  std::string jsonl;
  for (const char* prompt : {"One", "Two", "Three"})
    jsonl += nlohmann::json{{"instruction", prompt}, {"schema", kHalvesSchema}}.dump() + "\n";
  const std::string input = write_input_jsonl(dir, jsonl);
  ProcessResult r =
      run_sluice(mode_generate_args(input, dir + "/strict.jsonl", {"--schema-column", "schema"}));
  EXPECT_EQ(r.exit_code, 3) << r.err;  // every row refused, each naming its line
  for (const auto& row : read_jsonl(dir + "/strict.jsonl"))
    EXPECT_THAT(row["error"].get<std::string>(), HasSubstr("multipleOf")) << row;

  r = run_sluice(mode_generate_args(input, dir + "/loose.jsonl",
                                    {"--schema-column", "schema", "--schema-mode", "best-effort",
                                     "--json-whitespace", "compact"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_of(r.err, "/properties/n/multipleOf"), 1u) << r.err;
  EXPECT_THAT(r.err, HasSubstr("sluice generate: " + input + ":1: column 'schema': "));
  for (const auto& row : read_jsonl(dir + "/loose.jsonl"))
    EXPECT_THAT(row.dump(), Not(HasSubstr("\"error\""))) << row;
}

TEST(SchemaModeCli, BadValuesAreUsageErrorsNamingTheAcceptedOnes) {
  const std::string dir = make_temp_dir("schema_mode_usage");
  const std::string input = write_input_jsonl(dir, "{\"instruction\": \"One\"}\n");
  ProcessResult r =
      run_sluice(mode_generate_args(input, dir + "/o.jsonl", {"--schema-mode", "lax"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--schema-mode: unknown schema mode 'lax' (strict or best-effort)"));
  r = run_sluice(mode_generate_args(input, dir + "/o.jsonl", {"--json-whitespace", "tight"}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--json-whitespace: unknown JSON whitespace 'tight' (flexible or "
                               "compact)"));
  r = run_sluice({"serve", "--model", shared_path(kGgufF32), "--schema-mode", "loose"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("strict or best-effort"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/o.jsonl"));
}

// Catches a server default that does not reach the requests' grammars, a request that cannot
// ask for strict, and notes not logged (or logged per request).
TEST(SchemaModeServe, ABestEffortServerRunsWhatAStrictRequestIsRefused) {
  ServeProcess server({"--schema-mode", "best-effort"});
  const std::string body =
      str_cat(R"({"model": "stories", "max_completion_tokens": 30, "temperature": 1,
                  "messages": [{"role": "user", "content": "A number"}],
                  "response_format": {"type": "json_schema", "json_schema": {"schema": )",
              kHalvesSchema, "}}");
  for (int i = 0; i < 2; ++i) {
    const auto [status, response] = server.post("/v1/chat/completions", body + "}");
    EXPECT_EQ(status, 200) << response.dump();
  }
  const auto [strict_status, refused] =
      server.post("/v1/chat/completions", body + R"(, "schema_mode": "strict"})");
  EXPECT_EQ(strict_status, 400) << refused.dump();
  EXPECT_THAT(refused["error"]["message"].get<std::string>(), HasSubstr("multipleOf"));
  const std::string log = server.kill_and_read_stderr();
  EXPECT_EQ(count_of(log, "sluice serve: response_format.json_schema: /properties/n/multipleOf"),
            1u)
      << log;
}

}  // namespace
}  // namespace sluice::test
