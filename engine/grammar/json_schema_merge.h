// allOf as one schema: two schemas merged keyword by keyword into one whose valid values are
// exactly those valid for both, where such a merge is exact: types intersected, enum/const
// intersected, bounds tightened, properties and required united (a property one side lacks is
// checked against that side's additionalProperties), items merged. Keywords whose merge is not
// exact (two different patterns, two anyOf lists, two prefixItems lists, patternProperties beside
// properties of the other side, ...) are refused, naming the keyword and the allOf's pointer.
#pragma once

#include <functional>
#include <string>

#include "engine/grammar/json_schema_keywords.h"

namespace sluice {

// Where a merge reads $ref targets and how it names its errors.
struct SchemaMergeContext {
  std::string source_name;
  // Returns the schema a local reference ("#/$defs/A") points to; throws when it does not resolve.
  std::function<const SchemaJson&(const std::string& ref, const std::string& pointer)> resolve;
  SchemaDialect dialect = SchemaDialect::Draft2019Plus;
};

// Returns the schema of the values valid for both a and b, the schema `false` when none is.
// A top-level $ref on either side is replaced by its target (nested ones stay references).
// Throws sluice::Error "<source>: <pointer>/<keyword>: ..." when the merge would not be exact.
SchemaJson merge_schemas(const SchemaJson& a, const SchemaJson& b,
                         const SchemaMergeContext& context, const std::string& pointer,
                         int depth = 0);

// Returns schema with its top-level $ref replaced by the target merged with the siblings (the
// siblings dropped in draft-04..07), and its allOf merged into it; other schemas unchanged.
SchemaJson flatten_schema(const SchemaJson& schema, const SchemaMergeContext& context,
                          const std::string& pointer, int depth = 0);

}  // namespace sluice
