// Per-row structured output: a column of the instruction file holds each row's JSON Schema (an
// object, or a string holding one), so one job can ask every row for its own structure — the
// way extraction and function-calling datasets are built. Each row's schema becomes the grammar
// source of its request; the service that runs the rows compiles it, so rows that share a schema
// share its compiled grammar (and the engine's cached token masks).
#pragma once

#include <string>

#include "engine/grammar/grammar_source.h"
#include "engine/input/dataset_row.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class RowSchemas {
 public:
  // column: the field that holds each row's schema; input_path names the file in errors;
  // options: the job's JSON grammar options, given to every row's source.
  RowSchemas(std::string column, std::string input_path, const JsonGrammarOptions& options = {});

  // Returns the row's schema as a grammar source named after the file, the line and the column
  // (so a compile error names them too). Throws Error naming them and what is wrong: no such
  // column, or a value that is not a schema.
  GrammarSource source_for(const DatasetRow& row) const;
  // The same for a stored row (its input fields and line).
  GrammarSource source_for(const RowResult& row) const;
  // The same for a row's fields, line naming it in errors.
  GrammarSource source_for(const nlohmann::ordered_json& fields, size_t line = 0) const;

  const std::string& column() const { return column_; }

 private:
  std::string column_;
  std::string input_path_;
  JsonGrammarOptions options_;
};

}  // namespace sluice
