// `sluice jobs export --valid-only`: a real job with a schema per row, where two rows' short
// boolean schemas finish within max_tokens (valid) and one object schema is cut off (invalid):
// the export leaves the invalid row out and says so; without the flag all three are written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

TEST(ValidOnlyCli, ExportLeavesOutRowsThatDoNotFollowTheirSchema) {
  const std::string dir = make_temp_dir("valid-only");
  write_file(dir + "/input.jsonl",
             "{\"prompt\": \"Once upon a time\", \"schema\": {\"type\": \"boolean\"}}\n"
             "{\"prompt\": \"The cat\", \"schema\": {\"type\": \"object\", \"properties\": "
             "{\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]}}\n"
             "{\"prompt\": \"A dog\", \"schema\": {\"type\": \"boolean\"}}\n");
  const std::string job = dir + "/run.sluicejob";
  // Eight tokens hold " false" but not a whole object with a name.
  const auto generated = run_sluice({"generate", "--model",
                                     shared_path("models/stories260K/gguf/stories260K-f32.gguf"),
                                     "--input", dir + "/input.jsonl", "--job", job,
                                     "--schema-column", "schema", "--max-tokens", "8", "--quiet"});
  ASSERT_EQ(generated.exit_code, 0) << generated.err;

  const std::string all_out = dir + "/all.jsonl";
  const auto all = run_sluice({"jobs", "export", job, "--format", "jsonl", "--output", all_out});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const auto all_records = read_jsonl(all_out);
  ASSERT_EQ(all_records.size(), 3u);
  EXPECT_EQ(all_records[1]["valid"], false) << all_records[1].dump();

  const std::string valid_out = dir + "/valid.jsonl";
  const auto valid = run_sluice(
      {"jobs", "export", job, "--format", "jsonl", "--output", valid_out, "--valid-only"});
  ASSERT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_THAT(valid.err, HasSubstr("1 invalid"));
  const auto valid_records = read_jsonl(valid_out);
  ASSERT_EQ(valid_records.size(), 2u);
  EXPECT_EQ(valid_records[0]["row_index"], 0);
  EXPECT_EQ(valid_records[1]["row_index"], 2);
  for (const auto& record : valid_records) EXPECT_EQ(record["valid"], true) << record.dump();
}

}  // namespace
}  // namespace sluice::test
