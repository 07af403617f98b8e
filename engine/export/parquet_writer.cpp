#include "engine/export/parquet_writer.h"

#include <bit>
#include <climits>
#include <limits>

#include "engine/core/build_info.h"
#include "engine/core/error.h"
#include "engine/export/export_output.h"
#include "engine/export/rle_hybrid.h"
#include "engine/export/thrift_compact.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kParquetMagic = "PAR1";
// parquet.thrift enum values.
constexpr int32_t kPageTypeDataPage = 0;
constexpr int32_t kEncodingPlain = 0;
constexpr int32_t kEncodingRle = 3;
constexpr int32_t kCodecUncompressed = 0;

// One leaf's data in the open row group.
struct LeafChunk {
  // The open page: one level pair per value slot, and the PLAIN bytes of its non-null values
  // (booleans kept apart, bit-packed when the page closes).
  std::vector<uint8_t> repetition_levels;
  std::vector<uint8_t> definition_levels;
  std::string values;
  std::vector<uint8_t> booleans;
  // The row group's closed pages, each a PageHeader and its body.
  std::string pages;
  int64_t num_values = 0;  // level entries of the closed pages

  // The open page's size as encoded, near enough to cut pages and row groups by: levels take a
  // few bits each (4 per byte assumed), booleans one.
  size_t open_page_bytes() const {
    return values.size() + booleans.size() / 8 + definition_levels.size() / 4 +
           repetition_levels.size() / 4;
  }
};

// A column chunk as the footer describes it.
struct ChunkMeta {
  int64_t data_page_offset = 0;
  int64_t num_bytes = 0;
  int64_t num_values = 0;
};

struct RowGroupMeta {
  std::vector<ChunkMeta> chunks;  // one per leaf
  int64_t num_rows = 0;
};

void append_u32_le(std::string& out, uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

void append_u64_le(std::string& out, uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// PLAIN BYTE_ARRAY: a 4-byte length, then the bytes (valid UTF-8: the columns are STRING).
void append_plain_string(std::string& out, const std::string& text) {
  if (is_valid_utf8(text)) {
    append_u32_le(out, static_cast<uint32_t>(text.size()));
    out += text;
    return;
  }
  const std::string clean = sanitize_utf8(text);
  append_u32_le(out, static_cast<uint32_t>(clean.size()));
  out += clean;
}

// Why value does not fit a string slot (a StringList element, a message field), or null.
const char* string_mismatch(const Json& value) {
  if (value.is_null() || value.is_string()) return nullptr;
  return "expected a string or null";
}

// Returns why value (not null) does not fit column, or an empty string.
std::string value_mismatch(const Json& value, ParquetType type) {
  const auto got = [&value] {
    constexpr size_t kMaxShownBytes = 60;  // an error names the value, not all 100 kB of it
    std::string shown = value.dump(-1, ' ', false, Json::error_handler_t::replace);
    if (shown.size() > kMaxShownBytes) shown = shown.substr(0, kMaxShownBytes) + "...";
    return str_cat(", got ", value.type_name(), " ", shown);
  };
  constexpr size_t kMaxStringBytes = INT32_MAX - 64;  // a page and its length fit an i32
  switch (type) {
    case ParquetType::String:
      if (!value.is_string()) return str_cat("expected a string", got());
      if (value.get_ref<const std::string&>().size() > kMaxStringBytes)
        return str_cat("a string of ", value.get_ref<const std::string&>().size(),
                       " bytes is past Parquet's page limit of 2 GiB");
      return {};
    case ParquetType::Int64:
      if (value.is_number_unsigned() &&
          value.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return str_cat("expected an int64", got());
      if (!value.is_number_integer()) return str_cat("expected an integer (int64)", got());
      return {};
    case ParquetType::Double:
      if (!value.is_number()) return str_cat("expected a number (float64)", got());
      return {};
    case ParquetType::Bool:
      if (!value.is_boolean()) return str_cat("expected true or false", got());
      return {};
    case ParquetType::StringList:
      if (!value.is_array()) return str_cat("expected a list of strings", got());
      for (size_t i = 0; i < value.size(); ++i)
        if (const char* why = string_mismatch(value[i]))
          return str_cat("element ", i, ": ", why, ", got ", value[i].type_name());
      return {};
    case ParquetType::Messages:
      if (!value.is_array()) return str_cat("expected a list of messages", got());
      for (size_t i = 0; i < value.size(); ++i) {
        const Json& message = value[i];
        if (message.is_null()) continue;
        if (!message.is_object())
          return str_cat("message ", i, ": expected an object {content, role}, got ",
                         message.type_name());
        for (const auto& [key, field] : message.items()) {
          if (key != kMessageFields[0] && key != kMessageFields[1])
            return str_cat("message ", i, ": key \"", key,
                           "\" is not a message field (content, role)");
          if (const char* why = string_mismatch(field))
            return str_cat("message ", i, ", ", key, ": ", why, ", got ", field.type_name());
        }
      }
      return {};
  }
  return "unknown column type";
}

// Appends value's levels and PLAIN bytes for leaf to chunk. value is null for a null cell.
// Precondition: value fits the column (value_mismatch said so).
void shred_value(const Json* value, const ParquetColumn& column, const ParquetLeaf& leaf,
                 LeafChunk& chunk) {
  const uint8_t top = column.nullable ? 1 : 0;
  const auto slot = [&chunk](uint8_t repetition, uint8_t definition) {
    chunk.repetition_levels.push_back(repetition);
    chunk.definition_levels.push_back(definition);
  };
  if (value == nullptr) {
    slot(0, 0);
    return;
  }
  switch (column.type) {
    case ParquetType::String:
      slot(0, top);
      append_plain_string(chunk.values, value->get_ref<const std::string&>());
      return;
    case ParquetType::Int64:
      slot(0, top);
      append_u64_le(chunk.values, static_cast<uint64_t>(value->get<int64_t>()));
      return;
    case ParquetType::Double:
      slot(0, top);
      append_u64_le(chunk.values, std::bit_cast<uint64_t>(value->get<double>()));
      return;
    case ParquetType::Bool:
      slot(0, top);
      chunk.booleans.push_back(value->get<bool>() ? 1 : 0);
      return;
    case ParquetType::StringList:
    case ParquetType::Messages:
      break;
  }
  // A list: an empty one is defined up to the list field; each element repeats at level 1.
  if (value->empty()) {
    slot(0, top);
    return;
  }
  for (size_t i = 0; i < value->size(); ++i) {
    const uint8_t repetition = i == 0 ? 0 : 1;
    const Json& element = (*value)[i];
    if (element.is_null()) {
      slot(repetition, static_cast<uint8_t>(top + 1));
      continue;
    }
    const Json* text = &element;
    if (leaf.message_field != nullptr) {
      const auto field = element.find(leaf.message_field);
      text = field == element.end() ? nullptr : &*field;
    }
    if (text == nullptr || text->is_null()) {
      slot(repetition, static_cast<uint8_t>(leaf.max_definition_level - 1));
      continue;
    }
    slot(repetition, static_cast<uint8_t>(leaf.max_definition_level));
    append_plain_string(chunk.values, text->get_ref<const std::string&>());
  }
}

// Appends a v1 data page's levels: a 4-byte length, then the hybrid encoding (nothing when the
// leaf's maximum level is 0: such levels are implied).
void append_levels(std::string& body, const std::vector<uint8_t>& levels, int max_level) {
  if (max_level == 0) return;
  const size_t length_at = body.size();
  append_u32_le(body, 0);
  append_rle_hybrid(body, levels, rle_bit_width(static_cast<uint32_t>(max_level)));
  const auto length = static_cast<uint32_t>(body.size() - length_at - 4);
  for (int i = 0; i < 4; ++i)
    body[length_at + static_cast<size_t>(i)] = static_cast<char>((length >> (8 * i)) & 0xFF);
}

}  // namespace

std::string default_parquet_created_by() {
  return str_cat("sluice version ", build_info::kVersion);
}

struct ParquetWriter::State {
  ExportOutput out;
  std::vector<ParquetColumn> columns;
  std::vector<ParquetLeaf> leaves;
  ParquetOptions options;
  std::vector<LeafChunk> chunks;  // one per leaf: the open row group
  std::vector<RowGroupMeta> row_groups;
  int64_t open_group_rows = 0;
  uint64_t num_rows = 0;
  uint64_t file_offset = 0;
  uint64_t column_chunk_bytes = 0;
  size_t num_pages = 0;

  State(std::string path, std::vector<ParquetColumn> columns_in, ParquetOptions options_in)
      : out(std::move(path)), columns(std::move(columns_in)), options(std::move(options_in)) {}

  void write(std::string_view bytes) {
    out.write(bytes);
    file_offset += bytes.size();
  }

  void close_page(size_t leaf_idx);
  void close_row_group();
  std::string footer() const;
};

void ParquetWriter::State::close_page(size_t leaf_idx) {
  const ParquetLeaf& leaf = leaves[leaf_idx];
  LeafChunk& chunk = chunks[leaf_idx];
  if (chunk.definition_levels.empty()) return;
  std::string body;
  body.reserve(chunk.open_page_bytes() + 16);
  append_levels(body, chunk.repetition_levels, leaf.max_repetition_level);
  append_levels(body, chunk.definition_levels, leaf.max_definition_level);
  if (leaf.physical_type == ParquetPhysicalType::Boolean) {
    if (!chunk.booleans.empty()) append_bit_packed(body, chunk.booleans, 1);
  } else {
    body += chunk.values;
  }
  if (body.size() > static_cast<size_t>(INT32_MAX))
    fail(out.path(), ": column \"", columns[leaf.column_idx].name, "\": a page of ", body.size(),
         " bytes is past Parquet's limit of 2 GiB");
  ThriftCompactWriter header;
  header.struct_begin();  // PageHeader
  header.field_i32(1, kPageTypeDataPage);
  header.field_i32(2, static_cast<int32_t>(body.size()));  // uncompressed_page_size
  header.field_i32(3, static_cast<int32_t>(body.size()));  // compressed_page_size
  header.field_struct_begin(5);                            // data_page_header
  header.field_i32(1, static_cast<int32_t>(chunk.definition_levels.size()));  // num_values
  header.field_i32(2, kEncodingPlain);
  header.field_i32(3, kEncodingRle);  // definition_level_encoding
  header.field_i32(4, kEncodingRle);  // repetition_level_encoding
  header.struct_end();
  header.struct_end();
  chunk.pages += header.bytes();
  chunk.pages += body;
  chunk.num_values += static_cast<int64_t>(chunk.definition_levels.size());
  num_pages++;
  chunk.repetition_levels.clear();
  chunk.definition_levels.clear();
  chunk.values.clear();
  chunk.booleans.clear();
}

void ParquetWriter::State::close_row_group() {
  if (open_group_rows == 0) return;
  RowGroupMeta group;
  group.num_rows = open_group_rows;
  for (size_t i = 0; i < leaves.size(); ++i) {
    close_page(i);
    LeafChunk& chunk = chunks[i];
    group.chunks.push_back({static_cast<int64_t>(file_offset),
                            static_cast<int64_t>(chunk.pages.size()), chunk.num_values});
    write(chunk.pages);
    column_chunk_bytes += chunk.pages.size();
    chunk = LeafChunk{};  // gives the group's memory back
  }
  row_groups.push_back(std::move(group));
  open_group_rows = 0;
}

std::string ParquetWriter::State::footer() const {
  ThriftCompactWriter meta;
  meta.struct_begin();   // FileMetaData
  meta.field_i32(1, 1);  // version: 1, as the spec asks of writers
  write_parquet_schema(meta, columns);
  meta.field_i64(3, static_cast<int64_t>(num_rows));
  meta.field_list_begin(4, ThriftType::Struct, row_groups.size());
  for (const RowGroupMeta& group : row_groups) {
    meta.struct_begin();  // RowGroup
    meta.field_list_begin(1, ThriftType::Struct, group.chunks.size());
    int64_t group_bytes = 0;
    for (size_t i = 0; i < group.chunks.size(); ++i) {
      const ChunkMeta& chunk = group.chunks[i];
      const ParquetLeaf& leaf = leaves[i];
      group_bytes += chunk.num_bytes;
      meta.struct_begin();   // ColumnChunk
      meta.field_i64(2, 0);  // file_offset: deprecated, 0 when no metadata is outside the footer
      meta.field_struct_begin(3);  // ColumnMetaData
      meta.field_i32(1, static_cast<int32_t>(leaf.physical_type));
      meta.field_list_begin(2, ThriftType::I32, 2);  // encodings
      meta.list_i32(kEncodingPlain);
      meta.list_i32(kEncodingRle);
      meta.field_list_begin(3, ThriftType::Binary, leaf.path.size());  // path_in_schema
      for (const std::string& part : leaf.path) meta.list_binary(part);
      meta.field_i32(4, kCodecUncompressed);
      meta.field_i64(5, chunk.num_values);
      meta.field_i64(6, chunk.num_bytes);  // total_uncompressed_size
      meta.field_i64(7, chunk.num_bytes);  // total_compressed_size
      meta.field_i64(9, chunk.data_page_offset);
      meta.struct_end();
      meta.struct_end();
    }
    meta.field_i64(2, group_bytes);  // total_byte_size
    meta.field_i64(3, group.num_rows);
    meta.field_i64(5, group.chunks.front().data_page_offset);  // file_offset
    meta.field_i64(6, group_bytes);                            // total_compressed_size
    meta.struct_end();
  }
  meta.field_binary(6,
                    options.created_by.empty() ? default_parquet_created_by() : options.created_by);
  meta.struct_end();
  return meta.take();
}

ParquetWriter::ParquetWriter(std::string path, std::vector<ParquetColumn> columns,
                             ParquetOptions options) {
  check_parquet_columns(columns);
  state_ = std::make_unique<State>(std::move(path), std::move(columns), std::move(options));
  state_->leaves = parquet_leaves(state_->columns);
  state_->chunks.resize(state_->leaves.size());
  state_->write(kParquetMagic);
}

ParquetWriter::~ParquetWriter() = default;

const std::string& ParquetWriter::path() const {
  return state_->out.path();
}

uint64_t ParquetWriter::num_rows() const {
  return state_->num_rows;
}

void ParquetWriter::add_row(const Json& row) {
  State& s = *state_;
  if (!row.is_object())
    fail(s.out.path(), ": row ", s.num_rows, ": expected a JSON object, got ", row.type_name());
  // Every value is checked before any is stored, so a refused row leaves no trace.
  std::vector<const Json*> cells(s.columns.size(), nullptr);
  for (size_t c = 0; c < s.columns.size(); ++c) {
    const ParquetColumn& column = s.columns[c];
    const auto found = row.find(column.name);
    if (found == row.end() || found->is_null()) {
      if (!column.nullable)
        fail(s.out.path(), ": row ", s.num_rows, ", column \"", column.name,
             "\": null in a column that is not nullable");
      continue;
    }
    if (std::string why = value_mismatch(*found, column.type); !why.empty())
      fail(s.out.path(), ": row ", s.num_rows, ", column \"", column.name, "\" (",
           to_string(column.type), "): ", why);
    cells[c] = &*found;
  }
  for (size_t i = 0; i < s.leaves.size(); ++i) {
    const ParquetLeaf& leaf = s.leaves[i];
    shred_value(cells[leaf.column_idx], s.columns[leaf.column_idx], leaf, s.chunks[i]);
  }
  s.num_rows++;
  s.open_group_rows++;
  size_t group_bytes = 0;
  for (size_t i = 0; i < s.leaves.size(); ++i) {
    if (s.chunks[i].open_page_bytes() >= s.options.bytes_per_page) s.close_page(i);
    group_bytes += s.chunks[i].pages.size() + s.chunks[i].open_page_bytes();
  }
  if (static_cast<size_t>(s.open_group_rows) >= s.options.rows_per_group ||
      group_bytes >= s.options.bytes_per_group)
    s.close_row_group();
}

ParquetStats ParquetWriter::finish() {
  State& s = *state_;
  s.close_row_group();
  const std::string footer = s.footer();
  s.write(footer);
  std::string tail;
  append_u32_le(tail, static_cast<uint32_t>(footer.size()));
  tail += kParquetMagic;
  s.write(tail);
  s.out.commit();
  return {s.num_rows, s.row_groups.size(), s.num_pages, s.file_offset, s.column_chunk_bytes};
}

ParquetStats write_parquet(const std::string& path, const std::vector<ParquetColumn>& columns,
                           const std::vector<Json>& rows, const ParquetOptions& options) {
  ParquetWriter writer(path, columns, options);
  for (const Json& row : rows) writer.add_row(row);
  return writer.finish();
}

}  // namespace sluice
