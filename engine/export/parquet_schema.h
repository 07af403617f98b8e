// The columns of a Parquet file that Sluice writes, and how each lays out in the file's schema
// (parquet.thrift's SchemaElement list, LogicalTypes.md's nested types). Five column types cover
// ultrafeedback_binarized and the chat exports:
//
//   String      BYTE_ARRAY, STRING (UTF8)
//   Int64       INT64
//   Double      DOUBLE
//   Bool        BOOLEAN
//   StringList  <name> (LIST) → repeated group list → optional element (STRING)
//   Messages    <name> (LIST) → repeated group list → optional group element
//                                  → optional content (STRING), optional role (STRING)
//
// The lists are the 3-level LIST that pyarrow writes for Hugging Face datasets (a Messages column
// reads back as list<struct<content: string, role: string>>). A nullable column is OPTIONAL at
// the top, otherwise REQUIRED; list elements and a message's fields are always OPTIONAL, as
// Arrow's are. Each column stores one leaf (a Messages column two: content, role), each with the
// Dremel levels of its path: the maximum definition level counts the OPTIONAL and REPEATED
// fields on the path, the maximum repetition level the REPEATED ones.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sluice {

class ThriftCompactWriter;

enum class ParquetType { String, Int64, Double, Bool, StringList, Messages };

// Returns "string", "int64", "float64", "bool", "list<string>", "messages".
const char* to_string(ParquetType type);

struct ParquetColumn {
  std::string name;
  ParquetType type = ParquetType::String;
  bool nullable = true;
};

// parquet.thrift's physical types (the ones these columns use).
enum class ParquetPhysicalType : int32_t { Boolean = 0, Int64 = 2, Double = 5, ByteArray = 6 };

// The fields of a Messages column's structs, in the order Hugging Face datasets writes them.
inline constexpr const char* kMessageFields[] = {"content", "role"};

// One leaf column of the file: the values of one path.
struct ParquetLeaf {
  size_t column_idx = 0;          // in the ParquetColumn list
  std::vector<std::string> path;  // path_in_schema: {"chosen", "list", "element", "content"}
  ParquetPhysicalType physical_type = ParquetPhysicalType::ByteArray;
  int max_definition_level = 0;
  int max_repetition_level = 0;
  const char* message_field = nullptr;  // "content" or "role" for a Messages leaf, else null
};

// Throws Error when columns cannot make a file: none, an empty name or one not UTF-8, or a name
// used twice (naming it).
void check_parquet_columns(const std::vector<ParquetColumn>& columns);

// Returns the leaves of columns, in file order (a Messages column's content before its role).
std::vector<ParquetLeaf> parquet_leaves(const std::vector<ParquetColumn>& columns);

// Writes FileMetaData's field 2 (schema: list<SchemaElement>, the root "schema" first, then each
// column's elements depth first) to out.
void write_parquet_schema(ThriftCompactWriter& out, const std::vector<ParquetColumn>& columns);

}  // namespace sluice
