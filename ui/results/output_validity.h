// Whether a job's outputs are valid for what they were asked to be (the job's one grammar, or each
// row's own schema; a JSON Schema judged by the full validator, engine/grammar/output_check.h):
// what the results table's Valid column and the row detail show. A sample is valid when its whole
// output is; an output cut off by max_tokens inside a structure is not. Grammars
// are compiled (through a GrammarCache) when a row is first checked, never when the checker is
// made: the checks run on a pool thread, so opening a job compiles nothing on the GUI thread.
#pragma once

#include <QString>
#include <QStringList>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/generation_spec.h"
#include "app/row_schemas.h"
#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/output_check.h"
#include "engine/jobs/row_result.h"

namespace sluice {
class JobTable;
}  // namespace sluice

namespace sluice::ui {

class OutputValidity final {
 public:
  // Returns the checker for a job run with spec, or nullptr for free text (nothing to check).
  // Compiles nothing.
  static std::unique_ptr<OutputValidity> forSpec(const sluice::GenerationSpec& spec);

  // Returns whether row's sample sampleIdx is valid; nullopt when the row has no such sample.
  std::optional<bool> isValid(const sluice::RowResult& row, size_t sampleIdx);
  // Returns a sentence for the row detail: "valid JSON for the schema", "not valid: cut off by
  // max tokens", ...; "" when the row has no such sample.
  QString describe(const sluice::RowResult& row, size_t sampleIdx);

 private:
  OutputValidity() = default;
  // Returns the check of row's outputs (the job's grammar, or the row's own schema: the full
  // validator for a schema, output_check.h); nullptr with m_grammarError set when it does not
  // build.
  std::shared_ptr<const sluice::OutputCheck> checkFor(const sluice::RowResult& row);

  std::shared_ptr<const sluice::GrammarSource> m_source;  // the job's grammar; null: one per row
  std::unique_ptr<sluice::RowSchemas> m_rowSchemas;       // a schema per row
  sluice::GrammarCache m_grammars{64};
  // The checks made, by schema text (one for the job's source); at most 64 are kept.
  std::map<std::string, std::shared_ptr<const sluice::OutputCheck>> m_checks;
  std::string m_lastReason;  // why the last output checked is not valid
  QString m_grammarError;    // why the last row's grammar did not build
  QString m_sourceError;     // why the job's grammar did not build
};

// The Valid column's reads for rows stored before validity was kept (newer rows carry it in their
// summary): a page of a job's rows read whole (validity needs the whole output, a summary holds
// its head) and checked, off the GUI thread. Not thread-safe: one pool thread at
// a time uses it (it keeps its connection and grammars between pages).
class PageValidityReader final {
 public:
  PageValidityReader(std::string jobPath, sluice::GenerationSpec spec);
  ~PageValidityReader();

  // Returns per row whether it is valid (every sample; a stored verdict is taken as is); nullopt
  // for a row without samples (or not stored), and for every row when the job cannot be read
  // (error then names the file).
  std::vector<std::optional<bool>> read(const std::vector<int64_t>& rowIndices, std::string& error);
  // Returns a sentence per sample of row saying whether it is valid (OutputValidity::describe);
  // empty for free text.
  QStringList describe(const sluice::RowResult& row);

 private:
  std::string m_jobPath;
  sluice::GenerationSpec m_spec;
  std::unique_ptr<sluice::JobTable> m_table;
  std::unique_ptr<OutputValidity> m_validity;
};

}  // namespace sluice::ui
