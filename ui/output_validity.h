// Whether a job's outputs are sentences of its grammar (the job's one grammar, or each row's own
// schema): what the results table's Valid column and the row detail show. A sample is valid when
// its whole output matches; an output cut off by max_tokens inside a structure is not.
#pragma once

#include <QString>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "app/row_schemas.h"
#include "engine/grammar/grammar.h"
#include "engine/jobs/row_result.h"

namespace sluice {
class JobTable;
}  // namespace sluice

namespace sluice::ui {

class OutputValidity final {
 public:
  // Returns the checker for a job run with spec, or nullptr for free text (nothing to check).
  static std::unique_ptr<OutputValidity> forSpec(const sluice::GenerationSpec& spec);

  // Returns whether row's sample sampleIdx is valid; nullopt when the row has no such sample.
  std::optional<bool> isValid(const sluice::RowResult& row, size_t sampleIdx);
  // Returns a sentence for the row detail: "valid JSON for the schema", "not valid: cut off by
  // max tokens", ...; "" when the row has no such sample.
  QString describe(const sluice::RowResult& row, size_t sampleIdx);

 private:
  OutputValidity() = default;
  // Returns the grammar row's outputs follow; nullptr with m_grammarError set when it does not
  // build (the job's grammar, or the row's own schema).
  std::shared_ptr<const sluice::Grammar> grammarFor(const sluice::RowResult& row);

  std::optional<sluice::GrammarSourceKind> m_kind;   // the job's grammar; none: a schema per row
  std::shared_ptr<const sluice::Grammar> m_grammar;  // the job's grammar, built once
  std::unique_ptr<sluice::RowSchemas> m_rowSchemas;  // a schema per row
  QString m_grammarError;
};

// The Valid column's reads: a page of a job's rows read whole (validity needs the whole output,
// a summary holds its head) and checked, off the GUI thread. Not thread-safe: one pool thread at
// a time uses it (it keeps its connection and grammars between pages).
class PageValidityReader final {
 public:
  PageValidityReader(std::string jobPath, sluice::GenerationSpec spec);
  ~PageValidityReader();

  // Returns per row whether its sample 0 is valid; nullopt for a row without samples (or not
  // stored), and for every row when the job cannot be read (error then names the file).
  std::vector<std::optional<bool>> read(const std::vector<int64_t>& rowIndices, std::string& error);

 private:
  std::string m_jobPath;
  sluice::GenerationSpec m_spec;
  std::unique_ptr<sluice::JobTable> m_table;
  std::unique_ptr<OutputValidity> m_validity;
};

}  // namespace sluice::ui
