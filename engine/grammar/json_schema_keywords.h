// The JSON Schema keywords the grammar compiler knows, by what it does with each, and the dialect
// rewrite that turns draft-04..07 spellings into 2020-12 ones before a schema is compiled.
//
// A keyword is enforced (the grammar writes only values that satisfy it), an annotation (no
// effect on validity: ignored silently), refused (it changes validity and cannot be enforced
// exactly: the schema is refused, naming it), or unknown (the specification says to ignore it:
// ignored and listed in the notes). Some enforced keywords are enforced only in some forms (not,
// uniqueItems, multipleOf, format): the compiler refuses or notes the other forms itself.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/grammar/json_schema_validator_uri.h"

namespace sluice {

using SchemaJson = nlohmann::ordered_json;

enum class SchemaKeywordKind : uint8_t { Enforced, Annotation, Refused, Unknown };

// Returns what the compiler does with keyword.
SchemaKeywordKind schema_keyword_kind(std::string_view keyword);

// The kind of value a keyword constrains ("object", "array", "string", "number"), or "" for
// keywords that apply to every value (type, enum, anyOf, ...).
std::string_view schema_keyword_value_kind(std::string_view keyword);

// The keywords whose value is one subschema, an array of them, or an object of them (draft-04..07
// spellings included): how a walk over a schema (the validator's index, the grammar check's
// report) finds every subschema.
inline constexpr std::string_view kSingleSchemaKeywords[] = {"additionalItems",
                                                             "additionalProperties",
                                                             "contains",
                                                             "propertyNames",
                                                             "not",
                                                             "if",
                                                             "then",
                                                             "else",
                                                             "items",
                                                             "unevaluatedItems",
                                                             "unevaluatedProperties"};
inline constexpr std::string_view kSchemaArrayKeywords[] = {"allOf", "anyOf", "oneOf",
                                                            "prefixItems", "items"};
inline constexpr std::string_view kSchemaMapKeywords[] = {
    "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"};

// One keyword the compiler ignored: where it is, and why.
struct JsonSchemaNote {
  std::string pointer;  // JSON pointer of the keyword ("/properties/a/x-order")
  std::string keyword;
  std::string reason;  // "unknown keyword", "format 'int32' is not checked", ...
};

// What a schema's compile ignored (as the specification says to), and what --schema-mode
// best-effort dropped (a keyword the grammar cannot enforce: outputs are then checked by the
// validator), each keyword and pointer once.
struct JsonSchemaNotes {
  std::vector<JsonSchemaNote> ignored;
  std::vector<JsonSchemaNote> dropped;

  // Adds a note unless one for the same pointer and keyword is already there.
  void add(std::string pointer, std::string keyword, std::string reason);
  void add_dropped(std::string pointer, std::string keyword, std::string reason);
  // One line per note: "<pointer>: <reason> ('<keyword>' ignored)", then
  // "<pointer>: <reason> ('<keyword>' dropped: not enforced, outputs are validated after)".
  std::vector<std::string> lines() const;
};

// A keyword the grammar cannot enforce exactly, at keyword_pointer (the JSON pointer of the
// keyword in the schema as written, "/properties/tags/uniqueItems"). The message names the
// source, the pointer and why. --schema-mode best-effort drops the keyword and compiles again.
class SchemaRefusal : public Error {
 public:
  SchemaRefusal(const std::string& message, std::string keyword_pointer)
      : Error(message), keyword_pointer_(std::move(keyword_pointer)) {}
  const std::string& keyword_pointer() const { return keyword_pointer_; }

 private:
  std::string keyword_pointer_;
};

// Whether $ref's siblings are ignored (draft-04..07) or apply beside it (2019-09 and later).
enum class SchemaDialect : uint8_t { Draft4To7, Draft2019Plus };

// Returns the dialect root's $schema names (2020-12 when absent or unknown).
SchemaDialect schema_dialect(const SchemaJson& root);

// Returns schema with older spellings rewritten (id -> $id; boolean exclusiveMinimum/Maximum ->
// numeric; items as an array -> prefixItems, additionalItems -> items; dependencies -> the
// array form as dependentRequired, the schema form kept as dependencies), or nullopt when none
// appears. Keywords the rewrite drops as meaningless (additionalItems beside a schema-valued
// items) are added to notes under pointer.
std::optional<SchemaJson> rewrite_schema_dialect(const SchemaJson& schema,
                                                 const std::string& pointer,
                                                 JsonSchemaNotes& notes);

// Removes keys from the object schema, keeping the order of the others. (nlohmann 3.11's
// ordered_map::erase rebuilds const keys in place, which GCC 12 at -O3 miscompiles: the key
// stayed.)
void erase_schema_keys(SchemaJson& schema, std::initializer_list<std::string_view> keys);

}  // namespace sluice
