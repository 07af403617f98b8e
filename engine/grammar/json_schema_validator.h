// A JSON Schema validator, so that a row's `valid` means valid by the schema and not only by the
// grammar that generated it (a grammar may narrow or drop what it cannot express).
//
// Dialects: drafts 04, 06, 07, 2019-09 and 2020-12, chosen by the root's (or a resource's)
// $schema, 2020-12 when absent. Keywords: type, enum, const, multipleOf, minimum, maximum,
// exclusiveMinimum/Maximum (boolean in draft 04), minLength/maxLength (code points), pattern
// (json_schema_validator_pattern.h), items/prefixItems/additionalItems, contains/minContains/
// maxContains, minItems/maxItems, uniqueItems, properties/patternProperties/additionalProperties,
// required, dependentRequired/dependentSchemas/dependencies, propertyNames, minProperties/
// maxProperties, allOf/anyOf/oneOf/not, if/then/else, $ref to local JSON pointers, $id-based
// URIs and anchors of the same document, boolean schemas, unevaluatedItems/unevaluatedProperties
// (by annotation collection) and format as an assertion (json_schema_formats.h). Unknown keywords
// are ignored; remote references, $recursiveRef and $dynamicRef are refused when compiling.
//
// Numbers: equality as JSON's (1 == 1.0); integer means a number with no fraction; bounds compare
// integers exactly and mixed integer/float pairs as long double; multipleOf is exact on the
// shortest decimal spelling of each double (what the JSON text said for numbers of up to 15
// significant digits), so 0.0075 is a multiple of 0.0001 and 1e308 is not one of 0.123456789.
//
// Bounds: the schema nests at most kMaxJsonSchemaNesting subschemas; an instance nested deeper
// than kMaxJsonDepth, an evaluation deeper than kMaxJsonSchemaEvaluationDepth or a $ref that
// comes back to itself without moving into the instance is a failure, not a crash or a hang;
// at most kMaxJsonSchemaFailures failures are listed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace sluice {

// Subschemas nest at most this deep in a schema (the compiler recurses per subschema).
inline constexpr int kMaxJsonSchemaNesting = 128;
// The deepest chain of subschemas one validation may follow (through $refs too).
inline constexpr int kMaxJsonSchemaEvaluationDepth = 512;
// The most failures one validation lists.
inline constexpr size_t kMaxJsonSchemaFailures = 100;

struct CompiledJsonSchema;

// One reason an instance is not valid.
struct JsonSchemaFailure {
  std::string instance_pointer;  // JSON pointer of the offending value ("" = the whole instance)
  std::string
      schema_pointer;   // JSON pointer of the keyword in the schema, e.g. "/properties/a/minimum"
  std::string keyword;  // e.g. "minimum"
  std::string message;  // e.g. "3 is less than the minimum 5"
};

class JsonSchemaValidator {
 public:
  // Returns the validator of schema_text. Throws sluice::Error "<source_name>: <JSON pointer>:
  // <problem>" for text that is not JSON, a keyword value of the wrong type, a pattern neither
  // regex engine accepts, an unresolvable or remote $ref, $recursiveRef or $dynamicRef.
  static JsonSchemaValidator compile(std::string_view schema_text, const std::string& source_name);

  // Returns why instance is not valid (empty: valid). Thread-safe.
  std::vector<JsonSchemaFailure> validate(const nlohmann::json& instance) const;
  // Whether instance is valid (stops at the first failure). Thread-safe.
  bool is_valid(const nlohmann::json& instance) const;

 private:
  std::shared_ptr<const CompiledJsonSchema> schema_;
};

// Returns "<instance pointer or '/'>: <message> (<schema pointer>)" for a log or a row's note.
std::string describe_json_schema_failure(const JsonSchemaFailure& failure);

}  // namespace sluice
