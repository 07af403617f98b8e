// `--flatten-output`: `sluice generate --export csv` and `sluice jobs export --format csv` write
// one column per schema field of the JSON outputs, read back by Python's csv module (not by
// Sluice's own code); with another format it is a usage error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/integration/cli_test_util.h"

namespace sluice::test {
namespace {

using ::testing::HasSubstr;

const char* kSchema = R"({"type":"object","properties":{"mood":{"enum":["happy","sad"]},)"
                      R"("n":{"type":"integer","minimum":0,"maximum":9}},"required":["mood","n"]})";

// Reads the csv with Python's csv module and checks every row whose output parses as JSON:
// output.mood and output.n hold the object's values (mood happy or sad, n one digit); other rows
// have them empty. Prints {"rows": R, "parsed": P, "header": [...]} or exits 1 naming the row.
const char* kCheckCsv = R"(
import csv, json, sys
with open(sys.argv[1], newline="", encoding="utf-8") as f:
    rows = list(csv.reader(f))
header, body = rows[0], rows[1:]
col = {name: i for i, name in enumerate(header)}
parsed = 0
for r in body:
    if len(r) != len(header):
        sys.exit("row %s has %d fields, the header %d" % (r[0], len(r), len(header)))
    try:
        value = json.loads(r[col["output"]])
    except ValueError:
        value = None
    if isinstance(value, dict):
        parsed += 1
        if r[col["output.mood"]] not in ("happy", "sad") or r[col["output.mood"]] != value["mood"]:
            sys.exit("row %s: output.mood %r" % (r[0], r[col["output.mood"]]))
        n = r[col["output.n"]]
        if len(n) != 1 or not n.isdigit() or int(n) != value["n"]:
            sys.exit("row %s: output.n %r" % (r[0], n))
    elif r[col["output.mood"]] or r[col["output.n"]]:
        sys.exit("row %s: cells for an output that is not an object" % r[0])
print(json.dumps({"rows": len(body), "parsed": parsed, "header": header}))
)";

nlohmann::json check_csv(const std::string& path) {
  ProcessResult check = run_process({"/usr/bin/python3", "-c", kCheckCsv, path});
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  return check.exit_code == 0 ? nlohmann::json::parse(check.out) : nlohmann::json::object();
}

std::string write_inputs(const std::string& dir) {
  return write_input_jsonl(dir,
                           "{\"instruction\": \"How is the cat?\"}\n"
                           "{\"instruction\": \"How is the dog?\"}\n"
                           "{\"instruction\": \"Who is Lily?\"}\n"
                           "{\"instruction\": \"Count to nine.\"}\n");
}

TEST(ExportFlattenCli, GenerateAndJobsExportWriteSchemaFieldsAsColumns) {
  const std::string dir = make_temp_dir("export_flatten");
  const std::string schema = dir + "/schema.json";
  write_file(schema, kSchema);
  const std::string csv = dir + "/out.csv";
  ProcessResult r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                                write_inputs(dir), "--output", csv, "--job", dir + "/job.sluicejob",
                                "--json-schema", schema, "--temperature", "1", "--max-tokens", "64",
                                "--export", "csv", "--flatten-output", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json generated = check_csv(csv);
  EXPECT_EQ(generated.value("rows", 0), 4);
  EXPECT_GE(generated.value("parsed", 0), 3) << generated.dump();  // 64 tokens fit the schema
  const std::vector<std::string> expected_header = {
      "row_index",   "status",   "instruction",   "prompt",        "output",
      "output.mood", "output.n", "output_tokens", "finish_reason", "total_ms"};
  EXPECT_EQ(generated.value("header", std::vector<std::string>()), expected_header);

  const std::string exported = dir + "/exported.csv";
  ProcessResult e = run_sluice({"jobs", "export", dir + "/job.sluicejob", "--format", "csv",
                                "--output", exported, "--flatten-output"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(read_file(exported), read_file(csv));
}

TEST(ExportFlattenCli, FlattenOutputWithAnotherFormatIsAUsageError) {
  const std::string dir = make_temp_dir("export_flatten_usage");
  ProcessResult r = run_sluice({"generate", "--model", shared_path(kGgufF32), "--input",
                                write_inputs(dir), "--output", dir + "/out.jsonl", "--export",
                                "jsonl", "--flatten-output", "--quiet"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--flatten-output needs --export csv"));
  ProcessResult e = run_sluice({"jobs", "export", dir + "/missing.sluicejob", "--format", "jsonl",
                                "--output", dir + "/out.jsonl", "--flatten-output"});
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_THAT(e.err, HasSubstr("--flatten-output needs --format csv"));
}

}  // namespace
}  // namespace sluice::test
