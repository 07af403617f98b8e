// Whether a generated output is valid for the structure it was asked for, judged after generation
// by what the grammar source means, not by the grammar that produced it (a grammar may narrow what
// it cannot express): a JSON Schema by the full validator (json_schema_validator.h), a JSON object
// by parsing, a regex, choice list or GBNF grammar by the grammar's own matcher. So a row's
// `valid` means valid by the schema.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/grammar/grammar.h"
#include "engine/grammar/grammar_source.h"
#include "engine/grammar/json_schema_validator.h"

namespace sluice {

struct OutputVerdict {
  bool is_valid = false;
  std::string reason;  // why not, when !is_valid: "not JSON: ...", "/age: -1 is less than ..."
};

class OutputCheck {
 public:
  // grammar: the source's compiled grammar (what regex, choice and GBNF sources are checked by;
  // a JSON Schema the validator refuses falls back to it). Throws Error when a JSON Schema
  // source cannot be validated and no grammar is given.
  OutputCheck(const GrammarSource& source, std::shared_ptr<const Grammar> grammar);

  // Thread-safe.
  OutputVerdict check(std::string_view output) const;

 private:
  GrammarSourceKind kind_;
  std::shared_ptr<const Grammar> grammar_;
  std::optional<JsonSchemaValidator> validator_;  // JsonSchema sources
};

}  // namespace sluice
