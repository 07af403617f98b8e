#include "engine/grammar/json_schema_enforced.h"

#include <algorithm>
#include <span>
#include <string_view>

#include "engine/grammar/json_schema_validator.h"

namespace sluice {
namespace {

bool is_one_of(std::string_view keyword, std::span<const std::string_view> names) {
  return std::find(names.begin(), names.end(), keyword) != names.end();
}

void walk(const SchemaJson& schema, const std::string& pointer, int depth,
          const std::vector<std::string>& skipped, std::vector<EnforcedKeywords>& out) {
  if (!schema.is_object() || depth > kMaxJsonSchemaNesting) return;
  EnforcedKeywords here{pointer, {}};
  for (const auto& [keyword, value] : schema.items()) {
    const std::string at = pointer + "/" + escape_json_pointer_token(keyword);
    if (schema_keyword_kind(keyword) == SchemaKeywordKind::Enforced &&
        std::find(skipped.begin(), skipped.end(), at) == skipped.end()) {
      here.keywords.push_back(keyword);
    }
  }
  if (!here.keywords.empty()) out.push_back(std::move(here));
  for (const auto& [keyword, value] : schema.items()) {
    const std::string at = pointer + "/" + escape_json_pointer_token(keyword);
    if (value.is_object() && is_one_of(keyword, kSingleSchemaKeywords)) {
      walk(value, at, depth + 1, skipped, out);
    } else if (value.is_array() && is_one_of(keyword, kSchemaArrayKeywords)) {
      for (size_t i = 0; i < value.size(); ++i)
        walk(value[i], at + "/" + std::to_string(i), depth + 1, skipped, out);
    }
    if (value.is_object() && is_one_of(keyword, kSchemaMapKeywords)) {
      for (const auto& [name, subschema] : value.items())
        walk(subschema, at + "/" + escape_json_pointer_token(name), depth + 1, skipped, out);
    }
  }
}

}  // namespace

std::vector<EnforcedKeywords> enforced_schema_keywords(const SchemaJson& schema,
                                                       const std::vector<std::string>& skipped) {
  std::vector<EnforcedKeywords> out;
  walk(schema, "", 0, skipped, out);
  return out;
}

}  // namespace sluice
