// Which keywords of a JSON Schema the grammar enforces, by subschema: what `sluice grammar check`
// prints beside the compile's notes (what it ignored or dropped), so a person sees at a glance
// which parts of a schema the sampler holds outputs to.
#pragma once

#include <string>
#include <vector>

#include "engine/grammar/json_schema_keywords.h"

namespace sluice {

struct EnforcedKeywords {
  std::string pointer;                // the subschema's JSON pointer ("" for the root)
  std::vector<std::string> keywords;  // in the schema's order
};

// Returns, for every subschema of schema (properties, items, $defs, anyOf, ... followed to at
// most kMaxJsonSchemaNesting levels) that has any, the keywords of kind Enforced it holds, less
// those at a pointer in skipped ("/properties/a/format": ignored or dropped by the compile).
std::vector<EnforcedKeywords> enforced_schema_keywords(const SchemaJson& schema,
                                                       const std::vector<std::string>& skipped);

}  // namespace sluice
