// JSON Schema (draft-04 through 2020-12, as Pydantic, the OpenAI API and people's own schemas
// write it) as a grammar over the JSON text: every value the grammar writes is valid for the
// schema. What each keyword does is in json_schema_keywords.cpp; in short:
//
// Enforced: type (a name or a list), enum and const (only the values the keywords beside them
// accept), anyOf, oneOf (as anyOf, when no two branches can match one value: their types,
// const/enum values or a required property's schemas differ; otherwise refused), allOf (merged
// into one schema, json_schema_merge.h), keywords beside anyOf/oneOf/$ref (merged into each
// branch), not (of a type list), $ref to any local pointer (recursion included), $defs /
// definitions; objects: properties (written in schema order; required ones always, optional
// ones may be left out), required, additionalProperties (false, true or a schema: extra keys differ
// from the named ones and are written without escapes), patternProperties (extra keys written
// from the pattern; a pattern that also matches a named property writes no extra keys),
// propertyNames, minProperties / maxProperties, dependentRequired, dependentSchemas (an anyOf of
// up to 16 branches, one per choice of which of its properties are present); arrays: items,
// prefixItems, minItems, maxItems, contains (the first item satisfies it), uniqueItems (for items
// that are an enum or const: each value at most once, in the enum's order); strings: minLength,
// maxLength (code points), pattern (matched as a whole, see regex_grammar.h), format date /
// time / date-time / duration / uuid / email / hostname / ipv4 / ipv6 / uri, a pattern or a
// format beside minLength / maxLength (length_bound.h); numbers: minimum /
// maximum / exclusiveMinimum / exclusiveMaximum, multipleOf (a positive integer). Array, object,
// string and number keywords without "type" constrain values of their kind only.
//
// Dialects: draft-04's id, boolean exclusiveMinimum / exclusiveMaximum, tuple items with
// additionalItems and dependencies are read as their 2020-12 forms; $schema of draft-04..07
// makes keywords beside $ref ignored, as those drafts say.
//
// Ignored, and listed in JsonSchemaNotes: unknown keywords (vendor extensions, x-*, OpenAPI's
// nullable, ...), then / else without if, formats not listed above. Annotations (title,
// description, default, examples, $comment, readOnly, contentEncoding, ...) are ignored silently.
// Refused, naming the keyword and its JSON pointer: if, unevaluatedProperties / Items, $dynamicRef,
// and the forms of the enforced keywords a grammar cannot write exactly (--schema-mode best-effort
// drops them).
//
// Narrowings (every value written is valid, some valid values are never written): property
// order; numbers with bounds are written without exponent as integers in range or as M.ddd with
// a last digit that is not 0 and both integer neighbours M and M + 1 in range; unbounded
// integers have at most 16 digits, fractions at most 16 and exponents 2 (a double holds every such
// number); whitespace between tokens: none, one space, or a newline with up to 20 spaces or tabs;
// dates are years 1000-2999 with days valid for the month (February up to 28); times carry seconds
// and a zone; emails are a dotted local part, @ and a dotted domain; ipv6 in its full eight-group
// form; uuids in lower case; hostnames of up to 4 labels of 1-32 characters, none with "--" as its
// third and fourth characters (no IDNA A-labels: their decoding is not checked); uris are http(s)
// URLs; an object schema without additionalProperties writes no keys beyond its named (and pattern)
// ones; dependentRequired makes the dependencies of an optional property required;
// minProperties makes the first optional properties required, maxProperties leaves out the last
// ones and extra keys; multipleOf writes only integer multiples (of at most 15 digits without
// bounds); a pattern or format beside length bounds shares the bounds among its parts (a repeat of
// a part of varying length keeps the part within a narrower range); bounds past ±1e15 are brought
// to ±1e15.
#pragma once

#include <string>
#include <string_view>

#include "engine/grammar/grammar.h"
#include "engine/grammar/json_schema_keywords.h"

namespace sluice {

// The whitespace a JSON grammar lets the model write between tokens. Flexible: none, one space,
// or a newline with up to 20 spaces or tabs (pretty-printed JSON). Compact: none at all, the
// separators JSON.stringify writes ("," and ":"), so a small model cannot fill its max_tokens
// with blank lines. Both allow one leading space (SentencePiece models start output with "▁{").
enum class JsonWhitespace : uint8_t { Flexible, Compact };

// What a keyword the grammar cannot enforce exactly does. Strict: the schema is refused before
// any model loads, naming the keyword and its pointer. BestEffort: the keyword is dropped with a
// note (the grammar enforces the rest; the full validator marks outputs that break it).
enum class SchemaMode : uint8_t { Strict, BestEffort };

// Returns "flexible"/"compact", "strict"/"best-effort"; parse_* throw sluice::Error naming the
// accepted values for anything else.
const char* to_string(JsonWhitespace whitespace);
const char* to_string(SchemaMode mode);
JsonWhitespace parse_json_whitespace(const std::string& name);
SchemaMode parse_schema_mode(const std::string& name);

struct JsonGrammarOptions {
  JsonWhitespace whitespace = JsonWhitespace::Flexible;
  SchemaMode mode = SchemaMode::Strict;

  bool operator==(const JsonGrammarOptions&) const = default;
};

// Returns the grammar of JSON texts valid for the schema in schema_text; adds the keywords it
// ignored (and, best-effort, dropped) to notes when given, and to the grammar's notes(). Throws
// sluice::Error "<source_name>: <JSON pointer>: <problem>" for an unsatisfiable schema, a bad
// value, an unresolvable $ref, or text that is not JSON, and (strict) SchemaRefusal for a
// keyword it cannot enforce (named).
Grammar json_schema_grammar(std::string_view schema_text, const std::string& source_name,
                            const JsonGrammarOptions& options = {},
                            JsonSchemaNotes* notes = nullptr);

// Returns the grammar of any JSON object (OpenAI's json_object response format).
Grammar json_object_grammar(JsonWhitespace whitespace = JsonWhitespace::Flexible);

}  // namespace sluice
