// A JSON Schema compiled for validation: every subschema a node in one array, its keyword values
// checked and converted once, subschemas and resolved $refs as node indices (so recursive
// schemas are cycles of indices, not of pointers). Made by compile_json_schema_nodes
// (json_schema_validator_compile.cpp), walked by JsonSchemaValidator.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/grammar/json_schema_validator_pattern.h"

namespace sluice {

enum class JsonSchemaDraft : uint8_t { Draft4, Draft6, Draft7, Draft2019_09, Draft2020_12 };

inline constexpr uint32_t kNoSchemaNode = UINT32_MAX;

// Bits of SchemaNode::type_mask.
enum JsonSchemaTypeBit : uint8_t {
  kTypeNull = 1,
  kTypeBoolean = 2,
  kTypeObject = 4,
  kTypeArray = 8,
  kTypeNumber = 16,
  kTypeString = 32,
  kTypeInteger = 64,
};

struct SchemaNode {
  std::string pointer;  // the subschema's JSON pointer in the document
  JsonSchemaDraft draft = JsonSchemaDraft::Draft2020_12;
  std::optional<bool> boolean;  // a boolean schema: true accepts, false rejects
  uint8_t type_mask = 0;        // JsonSchemaTypeBit; 0 = no `type`
  std::optional<nlohmann::json> const_value;
  std::optional<nlohmann::json> enum_values;  // an array
  // Numbers as written (exclusive bounds as numbers whatever the draft spelled).
  std::optional<nlohmann::json> multiple_of, minimum, maximum, exclusive_minimum, exclusive_maximum;
  std::optional<uint64_t> min_length, max_length, min_items, max_items, min_contains, max_contains,
      min_properties, max_properties;
  std::shared_ptr<const JsonSchemaPattern> pattern;
  std::string format;  // "" when absent
  // Arrays: prefix_items[i] checks element i, items every element after them.
  std::vector<uint32_t> prefix_items;
  uint32_t items = kNoSchemaNode;
  const char* items_keyword = "items";  // how items was spelled (additionalItems in tuple form)
  uint32_t contains = kNoSchemaNode;
  bool unique_items = false;
  // Objects.
  std::map<std::string, uint32_t, std::less<>> properties;
  std::vector<std::pair<std::shared_ptr<const JsonSchemaPattern>, uint32_t>> pattern_properties;
  uint32_t additional_properties = kNoSchemaNode;
  std::vector<std::string> required;
  std::vector<std::pair<std::string, std::vector<std::string>>> dependent_required;
  std::vector<std::pair<std::string, uint32_t>> dependent_schemas;
  const char* dependencies_keyword = "dependentRequired";  // "dependencies" before 2019-09
  uint32_t property_names = kNoSchemaNode;
  // Combinators.
  std::vector<uint32_t> all_of, any_of, one_of;
  uint32_t not_schema = kNoSchemaNode, if_schema = kNoSchemaNode, then_schema = kNoSchemaNode,
           else_schema = kNoSchemaNode;
  uint32_t ref = kNoSchemaNode;
  std::string ref_text;  // the $ref as written, resolved into ref after the walk
  std::string ref_base;  // the base URI it resolves against
  uint32_t unevaluated_items = kNoSchemaNode, unevaluated_properties = kNoSchemaNode;
};

struct CompiledJsonSchema {
  std::vector<SchemaNode> nodes;  // nodes[0] is the root
  JsonSchemaDraft draft = JsonSchemaDraft::Draft2020_12;
  bool has_unevaluated = false;  // some node uses unevaluatedItems / unevaluatedProperties
};

// Returns schema_text compiled. Throws sluice::Error "<source_name>: <pointer>: <problem>".
CompiledJsonSchema compile_json_schema_nodes(std::string_view schema_text,
                                             const std::string& source_name);

}  // namespace sluice
