// The Parquet writer: whole files and pages against bytes worked out by hand from parquet.thrift
// and Encodings.md (a page header, the footer, Dremel levels of a nullable string and of a
// message list), errors that name the row and column, row groups, determinism. The integration
// test hub_folder_check reads the files back with an independent reader (hyparquet).
#include "engine/export/parquet_writer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/error.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

std::string bytes_of(std::initializer_list<int> values) {
  std::string out;
  for (const int v : values) out.push_back(static_cast<char>(v));
  return out;
}

std::string parquet_temp_file(const std::string& name) {
  return test::make_temp_dir("parquet_writer") + "/" + name;
}

// Returns the message of the Error that writing rows throws ("" when none).
std::string parquet_error(const std::vector<ParquetColumn>& columns,
                          const std::vector<Json>& rows) {
  try {
    write_parquet(parquet_temp_file("error.parquet"), columns, rows);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ParquetWriterTest, OneInt64RowIsTheHandComputedFile) {
  const std::string path = parquet_temp_file("one.parquet");
  ParquetOptions options;
  options.created_by = "t";
  const ParquetStats stats =
      write_parquet(path, {{"n", ParquetType::Int64, false}}, {Json{{"n", 1}}}, options);
  const std::string page_header =
      bytes_of({0x15, 0x00,              // type: DATA_PAGE
                0x15, 0x10, 0x15, 0x10,  // uncompressed and compressed size: 8
                0x2C,                    // data_page_header (field 5)
                0x15, 0x02,              // num_values 1
                0x15, 0x00,              // encoding PLAIN
                0x15, 0x06, 0x15, 0x06,  // level encodings RLE (none written: a required leaf)
                0x00, 0x00});
  const std::string values = bytes_of({1, 0, 0, 0, 0, 0, 0, 0});
  const std::string footer = bytes_of(
      {0x15, 0x02,                                      // version 1
       0x19, 0x2C,                                      // schema: 2 elements
       0x48, 0x06, 's',  'c',  'h',  'e',  'm',  'a',   //   root: name
       0x15, 0x02, 0x00,                                //   num_children 1
       0x15, 0x04, 0x25, 0x00, 0x18, 0x01, 'n',  0x00,  //   n: INT64, REQUIRED
       0x16, 0x02,                                      // num_rows 1
       0x19, 0x1C,                                      // row_groups: 1
       0x19, 0x1C,                                      //   columns: 1
       0x26, 0x00,                                      //     file_offset 0
       0x1C,                                            //     meta_data
       0x15, 0x04,                                      //       type INT64
       0x19, 0x25, 0x00, 0x06,                          //       encodings PLAIN, RLE
       0x19, 0x18, 0x01, 'n',                           //       path_in_schema
       0x15, 0x00,                                      //       codec UNCOMPRESSED
       0x16, 0x02,                                      //       num_values 1
       0x16, 0x32, 0x16, 0x32,                          //       sizes 25 (17 + 8)
       0x26, 0x08,                                      //       data_page_offset 4
       0x00, 0x00,                                      //
       0x16, 0x32, 0x16, 0x02, 0x26, 0x08, 0x16, 0x32,  //   total_byte_size, num_rows, offset
       0x00,                                            //
       0x28, 0x01, 't',                                 // created_by
       0x00});
  const std::string expected = "PAR1" + page_header + values + footer +
                               bytes_of({static_cast<int>(footer.size()), 0, 0, 0}) + "PAR1";
  EXPECT_EQ(test::read_file(path), expected);
  EXPECT_EQ(stats.num_rows, 1u);
  EXPECT_EQ(stats.num_row_groups, 1u);
  EXPECT_EQ(stats.file_bytes, expected.size());
  EXPECT_EQ(stats.column_chunk_bytes, 25u);
}

TEST(ParquetWriterTest, NullableStringsStoreDefinitionLevelsAndNonNullValues) {
  const std::string path = parquet_temp_file("strings.parquet");
  write_parquet(path, {{"s", ParquetType::String}},
                {Json{{"s", "a"}}, Json{{"s", nullptr}}, Json{{"s", ""}}});
  // Levels 1,0,1 at width 1: one bit-packed group (0x03) of 0b101, behind a 4-byte length; then
  // "a" and "" as PLAIN byte arrays.
  const std::string body = bytes_of({2, 0, 0, 0, 0x03, 0x05, 1, 0, 0, 0, 'a', 0, 0, 0, 0});
  const std::string header = bytes_of({0x15, 0x00, 0x15, 0x1E, 0x15, 0x1E, 0x2C, 0x15, 0x06, 0x15,
                                       0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00});
  EXPECT_EQ(test::read_file(path).substr(4, header.size() + body.size()), header + body);
}

TEST(ParquetWriterTest, MessageListsStoreRepetitionAndDefinitionLevels) {
  const std::string path = parquet_temp_file("messages.parquet");
  const Json messages = Json::parse(R"([{"content": "x", "role": "user"}, null, {"role": "a"}])");
  write_parquet(
      path, {{"chosen", ParquetType::Messages}},
      {Json{{"chosen", nullptr}}, Json{{"chosen", Json::array()}}, Json{{"chosen", messages}}});
  // The content leaf (max repetition 1, max definition 4): repetition 0,0,0,1,1 → 0x03 0x18;
  // definition 0 (null list), 1 (empty list), 4 ("x"), 2 (null message), 3 (no content), 3 bits
  // each → 0x03 0x08 0x35 0x00; then "x".
  const std::string content_body =
      bytes_of({2, 0, 0, 0, 0x03, 0x18, 4, 0, 0, 0, 0x03, 0x08, 0x35, 0x00, 1, 0, 0, 0, 'x'});
  const std::string content_header = bytes_of({0x15, 0x00, 0x15, 0x26, 0x15, 0x26, 0x2C, 0x15, 0x0A,
                                               0x15, 0x00, 0x15, 0x06, 0x15, 0x06, 0x00, 0x00});
  const std::string file = test::read_file(path);
  EXPECT_EQ(file.substr(4, content_header.size() + content_body.size()),
            content_header + content_body);
  // The role leaf follows: definition 0, 1, 4, 2, 4 → 0x03 0x08 0x45 0x00; "user", "a".
  const std::string role_body =
      bytes_of({2, 0, 0, 0, 0x03, 0x18, 4,   0,   0, 0, 0x03, 0x08, 0x45, 0x00,
                4, 0, 0, 0, 'u',  's',  'e', 'r', 1, 0, 0,    0,    'a'});
  const size_t role_at = 4 + content_header.size() + content_body.size();
  EXPECT_EQ(file.substr(role_at + content_header.size(), role_body.size()), role_body);
}

TEST(ParquetWriterTest, ATypeMismatchNamesTheRowAndColumn) {
  const std::vector<ParquetColumn> columns = {{"prompt", ParquetType::String},
                                              {"score", ParquetType::Double},
                                              {"chosen", ParquetType::Messages}};
  const std::string wrong_type =
      parquet_error(columns, {Json{{"score", 1}}, Json{{"score", 2.5}}, Json{{"score", "high"}}});
  EXPECT_NE(wrong_type.find("row 2, column \"score\""), std::string::npos) << wrong_type;
  EXPECT_NE(wrong_type.find("expected a number"), std::string::npos) << wrong_type;

  const std::string bad_key =
      parquet_error(columns, {Json{{"chosen", Json::parse(R"([{"name": "x"}])")}}});
  EXPECT_NE(bad_key.find("row 0, column \"chosen\""), std::string::npos) << bad_key;
  EXPECT_NE(bad_key.find("key \"name\""), std::string::npos) << bad_key;

  const std::string not_a_string =
      parquet_error(columns, {Json{{"prompt", "a"}}, Json{{"prompt", Json::array()}}});
  EXPECT_NE(not_a_string.find("row 1, column \"prompt\""), std::string::npos) << not_a_string;

  const std::string not_nullable =
      parquet_error({{"id", ParquetType::Int64, false}}, {Json{{"id", 1}}, Json::object()});
  EXPECT_NE(not_nullable.find("row 1, column \"id\""), std::string::npos) << not_nullable;
  EXPECT_NE(not_nullable.find("not nullable"), std::string::npos) << not_nullable;

  const std::string too_big =
      parquet_error({{"id", ParquetType::Int64}}, {Json{{"id", uint64_t{1} << 63}}});
  EXPECT_NE(too_big.find("row 0, column \"id\""), std::string::npos) << too_big;
}

TEST(ParquetWriterTest, ARefusedRowLeavesNoTraceAndTheBytesAreDeterministic) {
  const std::vector<ParquetColumn> columns = {
      {"s", ParquetType::String}, {"tags", ParquetType::StringList}, {"ok", ParquetType::Bool}};
  const Json first = {{"s", "a"}, {"tags", {"x", nullptr}}, {"ok", true}};
  const Json second = {{"s", "b"}, {"tags", Json::array()}, {"ok", false}};
  // Its string fits, its list does not: nothing of it may stay in the string leaf.
  const Json refused = {{"s", "zzz"}, {"tags", {1}}, {"ok", true}};
  const std::string dir = test::make_temp_dir("parquet_refused");
  ParquetWriter with_refusal(dir + "/a.parquet", columns);
  with_refusal.add_row(first);
  EXPECT_THROW(with_refusal.add_row(refused), Error);
  EXPECT_EQ(with_refusal.num_rows(), 1u);
  with_refusal.add_row(second);
  with_refusal.finish();
  write_parquet(dir + "/b.parquet", columns, {first, second});
  EXPECT_EQ(test::read_file(dir + "/a.parquet"), test::read_file(dir + "/b.parquet"));
}

TEST(ParquetWriterTest, RowGroupsCloseByRowsAndByBytes) {
  std::vector<Json> rows;
  for (int i = 0; i < 7; ++i) rows.push_back({{"n", i}, {"s", std::string(100, 'x')}});
  const std::vector<ParquetColumn> columns = {{"n", ParquetType::Int64},
                                              {"s", ParquetType::String}};
  ParquetOptions by_rows;
  by_rows.rows_per_group = 3;
  EXPECT_EQ(write_parquet(parquet_temp_file("rows.parquet"), columns, rows, by_rows).num_row_groups,
            3u);
  ParquetOptions by_bytes;
  by_bytes.bytes_per_group = 250;  // a row holds 8 + 104 value bytes: a group closes every 3rd
  EXPECT_EQ(
      write_parquet(parquet_temp_file("bytes.parquet"), columns, rows, by_bytes).num_row_groups,
      3u);
}

TEST(ParquetWriterTest, PagesCloseAtRowBoundariesOnceFull) {
  std::vector<Json> rows;
  for (int i = 0; i < 6; ++i)
    rows.push_back({{"n", i}, {"tags", {std::string(40, 'x'), std::string(40, 'y')}}});
  const std::vector<ParquetColumn> columns = {{"n", ParquetType::Int64},
                                              {"tags", ParquetType::StringList}};
  ParquetOptions options;
  options.bytes_per_page = 100;  // n's 8-byte values fill no page; tags' 88 bytes a row: 2 rows
  const ParquetStats stats =
      write_parquet(parquet_temp_file("pages.parquet"), columns, rows, options);
  EXPECT_EQ(stats.num_row_groups, 1u);
  EXPECT_EQ(stats.num_pages, 1u + 3u);
}

TEST(ParquetWriterTest, ZeroRowsMakeAFileWithNoRowGroup) {
  const std::string path = parquet_temp_file("empty.parquet");
  const ParquetStats stats = write_parquet(path, {{"s", ParquetType::String}}, {});
  const std::string file = test::read_file(path);
  EXPECT_EQ(stats.num_row_groups, 0u);
  ASSERT_GE(file.size(), 12u);
  EXPECT_EQ(file.substr(0, 4), "PAR1");
  EXPECT_EQ(file.substr(file.size() - 4), "PAR1");
  const auto footer_bytes = static_cast<uint8_t>(file[file.size() - 8]);
  EXPECT_EQ(4 + footer_bytes + 8, file.size());  // nothing but the magic and the footer
}

TEST(ParquetWriterTest, InvalidUtf8BecomesTheReplacementCharacter) {
  const std::string path = parquet_temp_file("utf8.parquet");
  write_parquet(path, {{"s", ParquetType::String, false}}, {Json{{"s", std::string("a\xFF")}}});
  EXPECT_NE(test::read_file(path).find(bytes_of({4, 0, 0, 0, 'a', 0xEF, 0xBF, 0xBD})),
            std::string::npos);
}

TEST(ParquetWriterTest, ColumnsNeedDistinctNames) {
  EXPECT_THROW(write_parquet(parquet_temp_file("dup.parquet"),
                             {{"a", ParquetType::String}, {"a", ParquetType::Int64}}, {}),
               Error);
  EXPECT_THROW(write_parquet(parquet_temp_file("none.parquet"), {}, {}), Error);
}

}  // namespace
}  // namespace sluice
