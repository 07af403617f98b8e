// The csv export's flatten_output: one column per top-level key of the JSON outputs. Every
// expected file below is written out by hand.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "engine/export/exporters.h"
#include "engine/jobs/job_store.h"
#include "tests/support/test_paths.h"
#include "tests/unit/jobs/job_test_rows.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// A done row with input {"q": q} (or input when given), prompt "p" and one sample per output.
RowResult flat_row(int64_t row_index, const std::vector<std::string>& outputs,
                   Json input = Json::object()) {
  RowResult row;
  row.row_index = row_index;
  row.line = static_cast<size_t>(row_index) + 1;
  row.status = RowStatus::Done;
  row.input = input.empty() ? Json{{"q", str_cat("x", row_index)}} : std::move(input);
  row.prompt = "p";
  for (const std::string& output : outputs) row.samples.push_back(test::make_sample(output, 3));
  row.total_ms = 1.5;
  return row;
}

// Exports rows (of a job with n samples and, when schema is not empty, that JSON Schema grammar)
// as csv with flatten_output and returns the file's text.
std::string export_flat(const std::string& name, const std::vector<RowResult>& rows, int n = 1,
                        const std::string& schema = "") {
  const std::string dir = test::make_temp_dir("export-flat-" + name);
  JobInfo info = test::make_job_info(n);
  if (!schema.empty())
    info.params["grammar"] = {{"kind", "json_schema"}, {"name", "schema.json"}, {"text", schema}};
  auto store = JobStore::create(dir + "/job.sluicejob", info);
  for (const RowResult& row : rows) store->add_result(row);
  store->flush();
  ExportOptions options;
  options.flatten_output = true;
  export_job(*store, ExportFormat::Csv, dir + "/out.csv", options);
  return test::read_file(dir + "/out.csv");
}

TEST(CsvFlattenExport, ColumnsFollowTheSchemaThenKeysItDoesNotList) {
  const std::string schema =
      R"({"type":"object","properties":{"b":{"type":"string"},"a":{"type":"integer"},)"
      R"("unused":{"type":"string"}}})";
  const std::string csv =
      export_flat("schema", {flat_row(0, {R"({"a":1,"extra":true,"b":"x"})"})}, 1, schema);
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,output.b,output.a,output.unused,output.extra,"
            "output_tokens,finish_reason,total_ms\r\n"
            "0,done,x0,p,\"{\"\"a\"\":1,\"\"extra\"\":true,\"\"b\"\":\"\"x\"\"}\",x,1,,true,3,"
            "stop,1.5\r\n");
}

TEST(CsvFlattenExport, WithoutASchemaKeysComeInFirstSeenOrder) {
  const std::string csv = export_flat(
      "first-seen", {flat_row(0, {R"({"z":1,"y":2})"}), flat_row(1, {R"({"x":3,"z":4})"})});
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,output.z,output.y,output.x,output_tokens,"
            "finish_reason,total_ms\r\n"
            "0,done,x0,p,\"{\"\"z\"\":1,\"\"y\"\":2}\",1,2,,3,stop,1.5\r\n"
            "1,done,x1,p,\"{\"\"x\"\":3,\"\"z\"\":4}\",4,,3,3,stop,1.5\r\n");
}

TEST(CsvFlattenExport, EverySampleGetsItsOwnColumns) {
  const std::string csv =
      export_flat("samples", {flat_row(0, {R"({"k":"a"})", R"({"k":"b","m":0})"})}, 2);
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,output_1,output.k,output.m,output_1.k,output_1.m,"
            "output_tokens,finish_reason,total_ms\r\n"
            "0,done,x0,p,\"{\"\"k\"\":\"\"a\"\"}\",\"{\"\"k\"\":\"\"b\"\",\"\"m\"\":0}\",a,,b,0,"
            "3,stop,1.5\r\n");
}

// Outputs that are not JSON objects leave the key cells empty; the output column keeps the text.
TEST(CsvFlattenExport, NonObjectAndUnparseableOutputsLeaveTheirCellsEmpty) {
  const std::string csv = export_flat(
      "non-object", {flat_row(0, {R"({"k":"v"})"}), flat_row(1, {"[1,2]"}), flat_row(2, {R"("k")"}),
                     flat_row(3, {R"({"k": "cut off)"}), flat_row(4, {R"({"k":null})"})});
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,output.k,output_tokens,finish_reason,total_ms\r\n"
            "0,done,x0,p,\"{\"\"k\"\":\"\"v\"\"}\",v,3,stop,1.5\r\n"
            "1,done,x1,p,\"[1,2]\",,3,stop,1.5\r\n"
            "2,done,x2,p,\"\"\"k\"\"\",,3,stop,1.5\r\n"
            "3,done,x3,p,\"{\"\"k\"\": \"\"cut off\",,3,stop,1.5\r\n"
            "4,done,x4,p,\"{\"\"k\"\":null}\",,3,stop,1.5\r\n");
}

TEST(CsvFlattenExport, NestedValuesAreCompactJsonAndScalarsTheirText) {
  const std::string output =
      R"({"arr": [1, {"x": "y"}], "obj": {"a": null}, "f": 1.5, "t": false, "s": "a,b"})";
  const std::string csv = export_flat("nested", {flat_row(0, {output})});
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,output.arr,output.obj,output.f,output.t,output.s,"
            "output_tokens,finish_reason,total_ms\r\n"
            "0,done,x0,p,\"{\"\"arr\"\": [1, {\"\"x\"\": \"\"y\"\"}], \"\"obj\"\": {\"\"a\"\": "
            "null}, \"\"f\"\": 1.5, \"\"t\"\": false, \"\"s\"\": \"\"a,b\"\"}\","
            "\"[1,{\"\"x\"\":\"\"y\"\"}]\",\"{\"\"a\"\":null}\",1.5,false,\"a,b\",3,stop,1.5\r\n");
}

// A key is untrusted text: quotes, commas and newlines in it are quoted like any other field.
TEST(CsvFlattenExport, AKeyWithQuotesAndNewlinesStaysOneQuotedField) {
  const std::string csv = export_flat("hostile", {flat_row(0, {R"({"a\"b\nc,d":"v"})"})});
  EXPECT_EQ(csv,
            "row_index,status,q,prompt,output,\"output.a\"\"b\nc,d\",output_tokens,finish_reason,"
            "total_ms\r\n"
            "0,done,x0,p,\"{\"\"a\\\"\"b\\nc,d\"\":\"\"v\"\"}\",v,3,stop,1.5\r\n");
}

// An input field named like a flattened column is renamed, as for the other result columns.
TEST(CsvFlattenExport, AnInputFieldNamedLikeAFlattenedColumnIsRenamed) {
  const std::string csv = export_flat(
      "collision", {flat_row(0, {R"({"mood":"sad"})"}, Json{{"output.mood", "happy"}})});
  EXPECT_EQ(csv,
            "row_index,status,input_output.mood,prompt,output,output.mood,output_tokens,"
            "finish_reason,total_ms\r\n"
            "0,done,happy,p,\"{\"\"mood\"\":\"\"sad\"\"}\",sad,3,stop,1.5\r\n");
}

// Outputs with more distinct keys than kMaxFlattenedKeys are refused, naming the job and row.
TEST(CsvFlattenExport, MoreKeysThanTheLimitIsAnErrorNamingTheRow) {
  Json many = Json::object();
  for (size_t i = 0; i < kMaxFlattenedKeys; ++i) many[str_cat("k", i)] = i;
  EXPECT_NO_THROW(export_flat("limit-ok", {flat_row(0, {many.dump()})}));
  Json one_more = Json{{"another", 1}};
  try {
    export_flat("limit", {flat_row(0, {many.dump()}), flat_row(1, {one_more.dump()})});
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("job.sluicejob: row 1: "), std::string::npos) << message;
    EXPECT_NE(message.find("more than 256"), std::string::npos) << message;
    EXPECT_NE(message.find("key \"another\""), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace sluice
