// Per-row structured output: a column of the instruction file holds each row's JSON Schema (an
// object, or a string holding one), so one job can ask every row for its own structure — the
// way extraction and function-calling datasets are built. Rows that share a schema share its
// compiled grammar (and the engine's cached token masks).
#pragma once

#include <memory>
#include <string>

#include "engine/data/dataset_row.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/grammar_source.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class RowSchemas {
 public:
  // column: the field that holds each row's schema; input_path names the file in errors.
  RowSchemas(std::string column, std::string input_path);

  // Returns the grammar of the row's schema. Throws Error naming the file, the line, the
  // column and what is wrong: no such column, not a schema, or the keyword the schema breaks.
  std::shared_ptr<const Grammar> grammar_for(const DatasetRow& row);
  // The same for a stored row (its input fields and line).
  std::shared_ptr<const Grammar> grammar_for(const RowResult& row);

  // Returns the row's schema as a grammar source (for a remote server, which compiles it
  // itself), line naming it in errors. Throws Error as grammar_for does for a missing or
  // non-schema value.
  GrammarSource source_for(const nlohmann::ordered_json& fields, size_t line = 0) const;

  const std::string& column() const { return column_; }

 private:
  std::shared_ptr<const Grammar> grammar_for(const nlohmann::ordered_json& fields, size_t line);

  std::string column_;
  std::string input_path_;
  GrammarCache cache_{256};
};

}  // namespace sluice
