// JSON Schema as Pydantic and the OpenAI API emit it, as a grammar over the JSON text.
//
// Supported: type (a name or a list), properties (written in schema order; required ones always,
// optional ones may be left out), required, additionalProperties (absent or false: no other
// keys; true or a schema: other keys, which must differ from the named ones and are written
// without escapes), items, prefixItems, minItems, maxItems, enum, const, anyOf, oneOf (as
// anyOf: the branches should not overlap), allOf of one schema, $ref into $defs / definitions /
// any local pointer (recursion included), minLength, maxLength (code points), pattern (matched
// as a whole, see regex_grammar.h), format date / time / date-time / uuid / email, nullable,
// minimum / maximum / exclusiveMinimum / exclusiveMaximum, and the annotations title,
// description, default, examples, $schema, $id, $comment, readOnly, writeOnly, deprecated,
// discriminator. Any other keyword is refused, naming it and its JSON pointer.
//
// Bounds: integers are exact (every integer in range, no other). Numbers with bounds are written
// without exponent as integers in range or as M.ddd with a last digit that is not 0 and both
// integer neighbours M and M + 1 in range, so every value written satisfies the bounds (values
// between a fractional bound and the next integer are not generated). Unbounded integers have at
// most 16 digits, fractions at most 16 and exponents 3, strings no limit. Whitespace between
// tokens: none, one space, or a newline with up to 20 spaces or tabs (so a model cannot loop on
// spaces). Dates are years 1000-2999 with days valid for the month (February up to 28); times
// carry seconds and a zone (Z or +hh:mm); emails are a dotted local part, @ and a dotted domain.
#pragma once

#include <string>
#include <string_view>

#include "engine/grammar/grammar.h"

namespace sluice {

// Schemas nest at most this deep (the converter recurses per subschema).
inline constexpr int kMaxSchemaNesting = 64;

// Returns the grammar of JSON texts valid for the schema in schema_text. Throws sluice::Error
// "<source_name>: <JSON pointer>: <problem>" for an unsupported keyword (named), a bad value,
// an unresolvable $ref, or text that is not JSON.
Grammar json_schema_grammar(std::string_view schema_text, const std::string& source_name);

// Returns the grammar of any JSON object (OpenAI's json_object response format).
Grammar json_object_grammar();

}  // namespace sluice
