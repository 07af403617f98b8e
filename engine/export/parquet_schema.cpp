#include "engine/export/parquet_schema.h"

#include <set>

#include "engine/core/error.h"
#include "engine/export/thrift_compact.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

// parquet.thrift enums and field ids of SchemaElement.
enum class Repetition : int32_t { Required = 0, Optional = 1, Repeated = 2 };
enum class ConvertedType : int32_t { Utf8 = 0, List = 3 };
constexpr int16_t kSchemaType = 1;
constexpr int16_t kSchemaRepetition = 3;
constexpr int16_t kSchemaName = 4;
constexpr int16_t kSchemaNumChildren = 5;
constexpr int16_t kSchemaConvertedType = 6;
constexpr int16_t kSchemaLogicalType = 10;
// LogicalType is a union: one field set to an empty struct.
constexpr int16_t kLogicalString = 1;
constexpr int16_t kLogicalList = 3;

// Counts the SchemaElements a column takes: a scalar one, a StringList three (group, list,
// element), a Messages column five (group, list, element, content, role).
size_t num_schema_elements(ParquetType type) {
  switch (type) {
    case ParquetType::StringList:
      return 3;
    case ParquetType::Messages:
      return 5;
    default:
      return 1;
  }
}

// One SchemaElement. type and converted type are left out when negative; logical_type is a
// LogicalType union field id, or 0 for none.
struct SchemaElementSpec {
  const std::string& name;
  Repetition repetition;
  int32_t type = -1;
  int32_t num_children = -1;
  int32_t converted_type = -1;
  int16_t logical_type = 0;
};

void write_schema_element(ThriftCompactWriter& out, const SchemaElementSpec& element) {
  out.struct_begin();
  if (element.type >= 0) out.field_i32(kSchemaType, element.type);
  out.field_i32(kSchemaRepetition, static_cast<int32_t>(element.repetition));
  out.field_binary(kSchemaName, element.name);
  if (element.num_children >= 0) out.field_i32(kSchemaNumChildren, element.num_children);
  if (element.converted_type >= 0) out.field_i32(kSchemaConvertedType, element.converted_type);
  if (element.logical_type != 0) {
    out.field_struct_begin(kSchemaLogicalType);
    out.field_struct_begin(element.logical_type);
    out.struct_end();
    out.struct_end();
  }
  out.struct_end();
}

void write_string_element(ThriftCompactWriter& out, const std::string& name,
                          Repetition repetition) {
  write_schema_element(out, {.name = name,
                             .repetition = repetition,
                             .type = static_cast<int32_t>(ParquetPhysicalType::ByteArray),
                             .converted_type = static_cast<int32_t>(ConvertedType::Utf8),
                             .logical_type = kLogicalString});
}

ParquetPhysicalType physical_type_of(ParquetType type) {
  switch (type) {
    case ParquetType::Int64:
      return ParquetPhysicalType::Int64;
    case ParquetType::Double:
      return ParquetPhysicalType::Double;
    case ParquetType::Bool:
      return ParquetPhysicalType::Boolean;
    default:
      return ParquetPhysicalType::ByteArray;
  }
}

}  // namespace

const char* to_string(ParquetType type) {
  switch (type) {
    case ParquetType::String:
      return "string";
    case ParquetType::Int64:
      return "int64";
    case ParquetType::Double:
      return "float64";
    case ParquetType::Bool:
      return "bool";
    case ParquetType::StringList:
      return "list<string>";
    case ParquetType::Messages:
      return "messages";
  }
  return "unknown";
}

void check_parquet_columns(const std::vector<ParquetColumn>& columns) {
  if (columns.empty()) fail("a Parquet file needs at least one column");
  std::set<std::string> names;
  for (size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].name.empty()) fail("Parquet column ", i, " has an empty name");
    if (!is_valid_utf8(columns[i].name))
      fail("Parquet column ", i, "'s name is not valid UTF-8: ", sanitize_utf8(columns[i].name));
    if (!names.insert(columns[i].name).second)
      fail("Parquet column name \"", columns[i].name, "\" is used twice");
  }
}

std::vector<ParquetLeaf> parquet_leaves(const std::vector<ParquetColumn>& columns) {
  std::vector<ParquetLeaf> leaves;
  for (size_t i = 0; i < columns.size(); ++i) {
    const ParquetColumn& column = columns[i];
    const int top = column.nullable ? 1 : 0;  // an OPTIONAL top field adds a definition level
    switch (column.type) {
      case ParquetType::StringList:
        // list (REPEATED) and element (OPTIONAL) add one definition level each.
        leaves.push_back({i,
                          {column.name, "list", "element"},
                          ParquetPhysicalType::ByteArray,
                          top + 2,
                          1,
                          nullptr});
        break;
      case ParquetType::Messages:
        // list (REPEATED), element (OPTIONAL) and the field (OPTIONAL).
        for (const char* field : kMessageFields)
          leaves.push_back({i,
                            {column.name, "list", "element", field},
                            ParquetPhysicalType::ByteArray,
                            top + 3,
                            1,
                            field});
        break;
      default:
        leaves.push_back({i, {column.name}, physical_type_of(column.type), top, 0, nullptr});
    }
  }
  return leaves;
}

void write_parquet_schema(ThriftCompactWriter& out, const std::vector<ParquetColumn>& columns) {
  size_t num_elements = 1;
  for (const ParquetColumn& column : columns) num_elements += num_schema_elements(column.type);
  out.field_list_begin(2, ThriftType::Struct, num_elements);
  // The root: a group of the columns, without a repetition of its own (as parquet-mr writes it).
  out.struct_begin();
  out.field_binary(kSchemaName, "schema");
  out.field_i32(kSchemaNumChildren, static_cast<int32_t>(columns.size()));
  out.struct_end();

  static const std::string kList = "list";
  static const std::string kElement = "element";
  for (const ParquetColumn& column : columns) {
    const Repetition top = column.nullable ? Repetition::Optional : Repetition::Required;
    if (column.type == ParquetType::String) {
      write_string_element(out, column.name, top);
      continue;
    }
    if (column.type != ParquetType::StringList && column.type != ParquetType::Messages) {
      write_schema_element(out, {.name = column.name,
                                 .repetition = top,
                                 .type = static_cast<int32_t>(physical_type_of(column.type))});
      continue;
    }
    write_schema_element(out, {.name = column.name,
                               .repetition = top,
                               .num_children = 1,
                               .converted_type = static_cast<int32_t>(ConvertedType::List),
                               .logical_type = kLogicalList});
    write_schema_element(out,
                         {.name = kList, .repetition = Repetition::Repeated, .num_children = 1});
    if (column.type == ParquetType::StringList) {
      write_string_element(out, kElement, Repetition::Optional);
      continue;
    }
    write_schema_element(out, {.name = kElement,
                               .repetition = Repetition::Optional,
                               .num_children = static_cast<int32_t>(std::size(kMessageFields))});
    for (const char* field : kMessageFields)
      write_string_element(out, std::string(field), Repetition::Optional);
  }
}

}  // namespace sluice
