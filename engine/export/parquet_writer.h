// A Parquet file writer of Sluice's own (Debian 12 packages no Arrow), for the Hugging Face
// export: rows of JSON objects in, a file any Parquet reader opens out. What it writes, from the
// format's spec (apache/parquet-format: parquet.thrift, Encodings.md, LogicalTypes.md):
//
//   "PAR1", then per row group, per leaf column (parquet_schema.h), its column chunk: v1 data
//   pages (DATA_PAGE, PLAIN values, levels in the RLE/bit-packed hybrid each behind a 4-byte
//   length, UNCOMPRESSED, no statistics); then the footer (FileMetaData, Thrift compact), its
//   4-byte length and "PAR1".
//
// A row group closes after rows_per_group rows or once its encoded bytes reach bytes_per_group;
// a page closes at the end of the row that brings its bytes to bytes_per_page, so pages start at
// row boundaries. Only the open row group is held in memory, encoded. The same rows and options
// give the same bytes: nothing time- or machine-dependent goes in.
//
// Values: a row's key per column (other keys are not written); a missing key or null is null
// (an Error for a column that is not nullable). String: a JSON string (invalid UTF-8 replaced by
// U+FFFD). Int64: a JSON integer within int64. Double: any JSON number. Bool: true/false.
// StringList: an array of strings or nulls. Messages: an array of objects (or nulls) whose keys
// are among "content" and "role", each a string or null (a missing one is null). Anything else
// is an Error naming the file, the row (its 0-based index among the rows added) and the column.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/export/parquet_schema.h"

namespace sluice {

struct ParquetOptions {
  size_t rows_per_group = 10000;
  size_t bytes_per_group = size_t{64} << 20;
  size_t bytes_per_page = size_t{1} << 20;
  // FileMetaData.created_by; empty means "sluice version <version>" (parquet-mr's
  // "<application> version <semver>" form, which readers parse to recognise a writer).
  std::string created_by;
};

struct ParquetStats {
  uint64_t num_rows = 0;
  size_t num_row_groups = 0;
  size_t num_pages = 0;  // data pages, over all leaves and row groups
  uint64_t file_bytes = 0;
  // The column chunks' bytes (pages and their headers), what a reader decodes: the file less
  // the magic and the footer.
  uint64_t column_chunk_bytes = 0;
};

// Returns "sluice version <the build's version>".
std::string default_parquet_created_by();

class ParquetWriter {
 public:
  // Opens path's temporary file (engine/export/export_output.h): path appears only after
  // finish(). Throws Error for bad columns (check_parquet_columns) or an unwritable path.
  ParquetWriter(std::string path, std::vector<ParquetColumn> columns, ParquetOptions options = {});
  ~ParquetWriter();
  ParquetWriter(const ParquetWriter&) = delete;
  ParquetWriter& operator=(const ParquetWriter&) = delete;

  // Adds one row. Throws Error naming the row and column when a value does not fit its column;
  // the row is then not added and the writer can go on.
  void add_row(const nlohmann::ordered_json& row);
  // Writes the last row group and the footer and renames the file into place. Zero rows make a
  // valid file with no row group.
  ParquetStats finish();

  const std::string& path() const;
  // Rows added so far (the index the next row's errors name).
  uint64_t num_rows() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Writes rows to path as Parquet in one go (see ParquetWriter).
ParquetStats write_parquet(const std::string& path, const std::vector<ParquetColumn>& columns,
                           const std::vector<nlohmann::ordered_json>& rows,
                           const ParquetOptions& options = {});

}  // namespace sluice
