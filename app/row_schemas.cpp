#include "app/row_schemas.h"

#include "engine/core/error.h"

namespace sluice {

RowSchemas::RowSchemas(std::string column, std::string input_path,
                       const JsonGrammarOptions& options)
    : column_(std::move(column)), input_path_(std::move(input_path)), options_(options) {}

GrammarSource RowSchemas::source_for(const DatasetRow& row) const {
  return source_for(row.fields, row.line);
}

GrammarSource RowSchemas::source_for(const RowResult& row) const {
  return source_for(row.input, row.line);
}

GrammarSource RowSchemas::source_for(const nlohmann::ordered_json& fields, size_t line) const {
  const std::string where = str_cat(input_path_, ":", line, ": column '", column_, "'");
  const auto it = fields.is_object() ? fields.find(column_) : fields.end();
  if (it == fields.end() || it->is_null()) fail(where, ": the row has no schema there");
  GrammarSource source;
  source.kind = GrammarSourceKind::JsonSchema;
  source.name = where;
  source.whitespace = options_.whitespace;
  source.schema_mode = options_.mode;
  if (it->is_object() || it->is_boolean()) {
    source.text = it->dump();
  } else if (it->is_string()) {
    source.text = it->get<std::string>();  // a schema written as JSON text (CSV cells, say)
  } else {
    fail(where, ": a JSON Schema is an object (or a string holding one), not ", it->type_name());
  }
  return source;
}

}  // namespace sluice
