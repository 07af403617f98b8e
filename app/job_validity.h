// A job's outputs judged valid or not when each row finishes (engine/grammar/output_check.h: a
// JSON Schema by the full validator), so the job file keeps each sample's validity and its reason
// (issue 32 item 5). Each row is judged by the source its request ran with: the job's structured
// output, the row's own schema, a batch line's own; free text is left unjudged. Runs on the
// job's thread; checks are made once per source.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "engine/grammar/grammar_cache.h"
#include "engine/grammar/output_check.h"
#include "engine/jobs/row_result.h"

namespace sluice {

class JobValidity {
 public:
  // Sets every sample's valid and invalid_reason for source (a source that cannot be checked:
  // invalid, with the error as the reason).
  void judge(RowResult& row, const GrammarSource& source);

 private:
  // The check of source, made once per kind and text; throws Error when it cannot be made.
  const OutputCheck& check_for(const GrammarSource& source);

  GrammarCache grammars_{16};
  std::map<std::string, std::unique_ptr<OutputCheck>> checks_;  // by kind and text, at most 64
};

}  // namespace sluice
