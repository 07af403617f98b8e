#include "engine/grammar/json_schema_keywords.h"

#include <algorithm>
#include <map>

namespace sluice {
namespace {

struct KeywordInfo {
  SchemaKeywordKind kind;
  std::string_view value_kind;  // "" for every value
};

const std::map<std::string_view, KeywordInfo>& keyword_table() {
  using K = SchemaKeywordKind;
  static const std::map<std::string_view, KeywordInfo> table = {
      // Every value.
      {"type", {K::Enforced, ""}},
      {"enum", {K::Enforced, ""}},
      {"const", {K::Enforced, ""}},
      {"anyOf", {K::Enforced, ""}},
      {"oneOf", {K::Enforced, ""}},
      {"allOf", {K::Enforced, ""}},
      {"not", {K::Enforced, ""}},
      {"$ref", {K::Enforced, ""}},
      {"$defs", {K::Enforced, ""}},
      {"definitions", {K::Enforced, ""}},
      // OpenAPI's, not JSON Schema's: a validator ignores it, so null is not written (valid
      // either way).
      {"nullable", {K::Unknown, ""}},
      {"if", {K::Refused, ""}},
      {"$dynamicRef", {K::Refused, ""}},
      {"$recursiveRef", {K::Refused, ""}},
      // Objects.
      {"properties", {K::Enforced, "object"}},
      {"required", {K::Enforced, "object"}},
      {"additionalProperties", {K::Enforced, "object"}},
      {"patternProperties", {K::Enforced, "object"}},
      {"propertyNames", {K::Enforced, "object"}},
      {"minProperties", {K::Enforced, "object"}},
      {"maxProperties", {K::Enforced, "object"}},
      {"dependentRequired", {K::Enforced, "object"}},
      {"dependentSchemas", {K::Enforced, "object"}},
      {"dependencies", {K::Enforced, "object"}},  // its schema form; the array form is rewritten
      {"unevaluatedProperties", {K::Refused, "object"}},
      // Arrays.
      {"items", {K::Enforced, "array"}},
      {"prefixItems", {K::Enforced, "array"}},
      {"minItems", {K::Enforced, "array"}},
      {"maxItems", {K::Enforced, "array"}},
      {"contains", {K::Enforced, "array"}},
      {"uniqueItems", {K::Enforced, "array"}},
      {"minContains", {K::Enforced, "array"}},
      {"maxContains", {K::Enforced, "array"}},
      {"unevaluatedItems", {K::Refused, "array"}},
      // Strings.
      {"minLength", {K::Enforced, "string"}},
      {"maxLength", {K::Enforced, "string"}},
      {"pattern", {K::Enforced, "string"}},
      {"format", {K::Enforced, "string"}},
      // Numbers.
      {"minimum", {K::Enforced, "number"}},
      {"maximum", {K::Enforced, "number"}},
      {"exclusiveMinimum", {K::Enforced, "number"}},
      {"exclusiveMaximum", {K::Enforced, "number"}},
      {"multipleOf", {K::Enforced, "number"}},
      // Annotations: no effect on which values are valid.
      {"title", {K::Annotation, ""}},
      {"description", {K::Annotation, ""}},
      {"default", {K::Annotation, ""}},
      {"examples", {K::Annotation, ""}},
      {"$schema", {K::Annotation, ""}},
      {"$id", {K::Annotation, ""}},
      {"$anchor", {K::Annotation, ""}},
      {"$dynamicAnchor", {K::Annotation, ""}},
      {"$recursiveAnchor", {K::Annotation, ""}},
      {"$vocabulary", {K::Annotation, ""}},
      {"$comment", {K::Annotation, ""}},
      {"readOnly", {K::Annotation, ""}},
      {"writeOnly", {K::Annotation, ""}},
      {"deprecated", {K::Annotation, ""}},
      {"discriminator", {K::Annotation, ""}},
      {"contentEncoding", {K::Annotation, ""}},
      {"contentMediaType", {K::Annotation, ""}},
      {"contentSchema", {K::Annotation, ""}},
  };
  return table;
}

}  // namespace

SchemaKeywordKind schema_keyword_kind(std::string_view keyword) {
  auto it = keyword_table().find(keyword);
  return it == keyword_table().end() ? SchemaKeywordKind::Unknown : it->second.kind;
}

std::string_view schema_keyword_value_kind(std::string_view keyword) {
  auto it = keyword_table().find(keyword);
  return it == keyword_table().end() ? std::string_view() : it->second.value_kind;
}

void JsonSchemaNotes::add(std::string pointer, std::string keyword, std::string reason) {
  for (const JsonSchemaNote& note : ignored) {
    if (note.pointer == pointer && note.keyword == keyword) return;
  }
  ignored.push_back({std::move(pointer), std::move(keyword), std::move(reason)});
}

void JsonSchemaNotes::add_dropped(std::string pointer, std::string keyword, std::string reason) {
  for (const JsonSchemaNote& note : dropped) {
    if (note.pointer == pointer && note.keyword == keyword) return;
  }
  dropped.push_back({std::move(pointer), std::move(keyword), std::move(reason)});
}

std::vector<std::string> JsonSchemaNotes::lines() const {
  std::vector<std::string> out;
  for (const JsonSchemaNote& note : ignored) {
    out.push_back((note.pointer.empty() ? "/" : note.pointer) + ": " + note.reason + " ('" +
                  note.keyword + "' ignored)");
  }
  for (const JsonSchemaNote& note : dropped) {
    out.push_back((note.pointer.empty() ? "/" : note.pointer) + ": " + note.reason + " ('" +
                  note.keyword + "' dropped: not enforced, outputs are validated after)");
  }
  return out;
}

SchemaDialect schema_dialect(const SchemaJson& root) {
  if (!root.is_object() || !root.contains("$schema") || !root["$schema"].is_string()) {
    return SchemaDialect::Draft2019Plus;
  }
  const std::string uri = root["$schema"].get<std::string>();
  for (const char* old : {"draft-03", "draft-04", "draft-05", "draft-06", "draft-07"}) {
    if (uri.find(old) != std::string::npos) return SchemaDialect::Draft4To7;
  }
  return SchemaDialect::Draft2019Plus;
}

std::optional<SchemaJson> rewrite_schema_dialect(const SchemaJson& schema,
                                                 const std::string& pointer,
                                                 JsonSchemaNotes& notes) {
  if (!schema.is_object()) return std::nullopt;
  bool has_old_bound =
      (schema.contains("exclusiveMinimum") && schema["exclusiveMinimum"].is_boolean()) ||
      (schema.contains("exclusiveMaximum") && schema["exclusiveMaximum"].is_boolean());
  bool has_old_id = schema.contains("id") && schema["id"].is_string();
  bool has_tuple = schema.contains("items") && schema["items"].is_array();
  bool has_additional_items = schema.contains("additionalItems");
  bool has_dependencies = false;  // with an array value (the schema form stays as it is)
  if (schema.contains("dependencies") && schema["dependencies"].is_object()) {
    for (const auto& [key, value] : schema["dependencies"].items())
      has_dependencies |= value.is_array();
  }
  if (!has_old_bound && !has_old_id && !has_tuple && !has_additional_items && !has_dependencies) {
    return std::nullopt;
  }
  SchemaJson out = schema;
  if (has_old_id) {
    if (!out.contains("$id")) out["$id"] = out["id"];
    erase_schema_keys(out, {"id"});
  }
  // Draft 4: a boolean exclusiveMinimum makes minimum exclusive.
  for (auto [exclusive, inclusive] :
       {std::pair{"exclusiveMinimum", "minimum"}, std::pair{"exclusiveMaximum", "maximum"}}) {
    if (!out.contains(exclusive) || !out[exclusive].is_boolean()) continue;
    bool is_exclusive = out[exclusive].get<bool>();
    erase_schema_keys(out, {exclusive});
    if (is_exclusive && out.contains(inclusive)) {
      out[exclusive] = out[inclusive];
      erase_schema_keys(out, {inclusive});
    }
  }
  // Draft 4-7 tuples: items as an array, additionalItems for the rest.
  if (has_tuple) {
    out["prefixItems"] = out["items"];
    erase_schema_keys(out, {"items"});
    if (out.contains("additionalItems")) {
      out["items"] = out["additionalItems"];
      erase_schema_keys(out, {"additionalItems"});
    }
  } else if (has_additional_items) {
    notes.add(pointer + "/additionalItems", "additionalItems",
              "'additionalItems' without an array 'items' has no effect");
    erase_schema_keys(out, {"additionalItems"});
  }
  if (has_dependencies) {
    SchemaJson required = SchemaJson::object(), schemas = SchemaJson::object();
    for (const auto& [key, value] : out["dependencies"].items()) {
      (value.is_array() ? required : schemas)[key] = value;
    }
    // The schema form stays under its own name, so that a refusal names what was written.
    erase_schema_keys(out, {"dependencies"});
    if (!required.empty()) out["dependentRequired"] = required;
    if (!schemas.empty()) out["dependencies"] = schemas;
  }
  return out;
}

void erase_schema_keys(SchemaJson& schema, std::initializer_list<std::string_view> keys) {
  SchemaJson kept = SchemaJson::object();
  for (auto& [key, value] : schema.items()) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) kept[key] = std::move(value);
  }
  schema = std::move(kept);
}

}  // namespace sluice
