#include "engine/grammar/json_schema_merge.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "engine/core/error.h"

namespace sluice {
namespace {

// References and allOf nest at most this deep while merging (a schema that refers to itself at
// its top level would otherwise never finish).
constexpr int kMaxMergeDepth = 64;

const std::set<std::string>& all_types() {
  static const std::set<std::string> types = {"null",   "boolean", "object", "array",
                                              "string", "number",  "integer"};
  return types;
}

std::set<std::string> type_set(const SchemaJson& schema) {
  if (!schema.contains("type")) return all_types();
  const SchemaJson& type = schema["type"];
  std::set<std::string> out;
  if (type.is_string()) out.insert(type.get<std::string>());
  if (type.is_array()) {
    for (const auto& t : type) {
      if (t.is_string()) out.insert(t.get<std::string>());
    }
  }
  if (out.count("number")) out.insert("integer");
  return out;
}

class SchemaMerger {
 public:
  explicit SchemaMerger(const SchemaMergeContext& context) : context_(context) {}

  template <typename... Args>
  [[noreturn]] void error(const std::string& pointer, Args&&... args) const {
    fail(context_.source_name, ": ", pointer.empty() ? "/" : pointer, ": ",
         std::forward<Args>(args)...);
  }
  // Two branches that cannot be merged exactly: SchemaRefusal, whose keyword pointer the allOf
  // being flattened fills in (the branch that conflicts).
  template <typename... Args>
  [[noreturn]] void refuse(const std::string& pointer, Args&&... args) const {
    throw SchemaRefusal(str_cat(context_.source_name, ": ", pointer.empty() ? "/" : pointer, ": ",
                                std::forward<Args>(args)...),
                        "");
  }

  SchemaJson flatten(const SchemaJson& schema, const std::string& pointer, int depth) {
    if (depth > kMaxMergeDepth) {
      error(pointer, "references and allOf nest deeper than ", kMaxMergeDepth, " while merging");
    }
    if (!schema.is_object()) return schema;
    JsonSchemaNotes unused;
    SchemaJson out = rewrite_schema_dialect(schema, pointer, unused).value_or(schema);
    if (out.contains("$ref") && out["$ref"].is_string()) {
      const SchemaJson& target = context_.resolve(out["$ref"].get<std::string>(), pointer);
      SchemaJson siblings = out;
      erase_schema_keys(siblings, {"$ref"});
      if (context_.dialect == SchemaDialect::Draft4To7) siblings = SchemaJson::object();
      out = merge(target, siblings, pointer, depth + 1);
    }
    if (out.is_object() && out.contains("allOf")) {
      const SchemaJson branches = out["allOf"];
      if (!branches.is_array() || branches.empty())
        error(pointer + "/allOf", "'allOf' must be a non-empty array");
      erase_schema_keys(out, {"allOf"});
      for (size_t i = 0; i < branches.size(); ++i) {
        std::string branch_pointer = str_cat(pointer, "/allOf/", i);
        try {
          out = merge(out, branches[i], branch_pointer, depth + 1);
        } catch (const SchemaRefusal& refusal) {
          if (!refusal.keyword_pointer().empty()) throw;
          throw SchemaRefusal(refusal.what(), branch_pointer);
        }
      }
    }
    return out;
  }

  SchemaJson merge(const SchemaJson& a_in, const SchemaJson& b_in, const std::string& pointer,
                   int depth) {
    SchemaJson a = flatten(a_in, pointer, depth + 1);
    SchemaJson b = flatten(b_in, pointer, depth + 1);
    if (a.is_boolean()) return a.get<bool>() ? b : a;
    if (b.is_boolean()) return b.get<bool>() ? a : b;
    if (!a.is_object() || !b.is_object()) return a.is_object() ? b : a;  // the visitor refuses it
    SchemaJson out = SchemaJson::object();
    if (!merge_types(a, b, out)) return false;
    if (!merge_values(a, b, out)) return false;
    merge_objects(a, b, out, pointer, depth);
    merge_arrays(a, b, out, pointer, depth);
    for (const SchemaJson* side : {&a, &b}) {
      for (const auto& [key, value] : side->items()) {
        if (is_grouped(key)) continue;
        if (!out.contains(key)) {
          out[key] = value;
        } else if (side == &b) {
          out[key] = merge_keyword(key, out[key], value, pointer, depth);
        }
      }
    }
    return out;
  }

 private:
  static bool is_grouped(const std::string& key) {
    static const std::set<std::string> grouped = {
        "type",  "enum",        "const", "properties", "additionalProperties", "patternProperties",
        "items", "prefixItems", "allOf", "$ref"};
    return grouped.count(key) != 0;
  }

  // Writes the intersection of the types; false when it is empty.
  static bool merge_types(const SchemaJson& a, const SchemaJson& b, SchemaJson& out) {
    if (!a.contains("type") && !b.contains("type")) return true;
    std::set<std::string> sa = type_set(a), sb = type_set(b), both;
    std::set_intersection(sa.begin(), sa.end(), sb.begin(), sb.end(),
                          std::inserter(both, both.end()));
    if (both.count("number")) both.erase("integer");
    if (both.empty()) return false;
    if (both.size() == 1) {
      out["type"] = *both.begin();
    } else {
      out["type"] = SchemaJson::array();
      for (const auto& t : both) out["type"].push_back(t);
    }
    return true;
  }

  // Writes the intersection of enum/const lists; false when it is empty.
  static bool merge_values(const SchemaJson& a, const SchemaJson& b, SchemaJson& out) {
    auto values_of = [](const SchemaJson& s) -> std::optional<SchemaJson> {
      if (s.contains("const")) return SchemaJson::array({s["const"]});
      if (s.contains("enum") && s["enum"].is_array()) return s["enum"];
      if (s.contains("enum")) return s["enum"];  // not an array: the visitor refuses it
      return std::nullopt;
    };
    auto va = values_of(a), vb = values_of(b);
    if (!va && !vb) return true;
    if (!va || !vb || !va->is_array() || !vb->is_array()) {
      out["enum"] = va ? *va : *vb;
      return true;
    }
    SchemaJson both = SchemaJson::array();
    for (const auto& value : *va) {
      if (std::find(vb->begin(), vb->end(), value) != vb->end()) both.push_back(value);
    }
    if (both.empty()) return false;
    out["enum"] = both;
    return true;
  }

  void merge_objects(const SchemaJson& a, const SchemaJson& b, SchemaJson& out,
                     const std::string& pointer, int depth) {
    auto has = [](const SchemaJson& s, const char* key) { return s.contains(key); };
    bool a_object = has(a, "properties") || has(a, "additionalProperties");
    bool b_object = has(b, "properties") || has(b, "additionalProperties");
    if ((has(a, "patternProperties") && (b_object || has(b, "patternProperties"))) ||
        (has(b, "patternProperties") && a_object)) {
      refuse(pointer + "/allOf", "'patternProperties' merged with another branch's properties ",
             "is not supported");
    }
    for (const SchemaJson* side : {&a, &b}) {
      if (side->contains("patternProperties"))
        out["patternProperties"] = (*side)["patternProperties"];
    }
    // A key one side does not name is checked by that side's additionalProperties.
    std::vector<std::string> keys;
    for (const SchemaJson* side : {&a, &b}) {
      if (!side->contains("properties") || !(*side)["properties"].is_object()) continue;
      for (const auto& [key, value] : (*side)["properties"].items()) {
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
    }
    auto schema_for = [](const SchemaJson& side, const std::string& key) -> const SchemaJson* {
      if (side.contains("properties") && side["properties"].is_object() &&
          side["properties"].contains(key)) {
        return &side["properties"][key];
      }
      if (side.contains("additionalProperties")) return &side["additionalProperties"];
      return nullptr;
    };
    if (!keys.empty()) {
      SchemaJson properties = SchemaJson::object();
      for (const auto& key : keys) {
        const SchemaJson* sa = schema_for(a, key);
        const SchemaJson* sb = schema_for(b, key);
        std::string here = pointer + "/properties/" + escape_json_pointer_token(key);
        properties[key] = sa && sb ? merge(*sa, *sb, here, depth + 1) : (sa ? *sa : *sb);
      }
      out["properties"] = properties;
    }
    if (a.contains("additionalProperties") && b.contains("additionalProperties")) {
      out["additionalProperties"] = merge(a["additionalProperties"], b["additionalProperties"],
                                          pointer + "/additionalProperties", depth + 1);
    } else if (a.contains("additionalProperties") || b.contains("additionalProperties")) {
      out["additionalProperties"] =
          (a.contains("additionalProperties") ? a : b)["additionalProperties"];
    }
  }

  void merge_arrays(const SchemaJson& a, const SchemaJson& b, SchemaJson& out,
                    const std::string& pointer, int depth) {
    bool a_prefix = a.contains("prefixItems"), b_prefix = b.contains("prefixItems");
    if (a_prefix && b_prefix && a["prefixItems"] != b["prefixItems"]) {
      refuse(pointer + "/allOf", "two different 'prefixItems' lists cannot be merged");
    }
    const SchemaJson* items_a = a.contains("items") ? &a["items"] : nullptr;
    const SchemaJson* items_b = b.contains("items") ? &b["items"] : nullptr;
    if (a_prefix || b_prefix) {
      const SchemaJson& prefix = (a_prefix ? a : b)["prefixItems"];
      // The side without prefixItems checks every item with its items.
      const SchemaJson* other_items =
          a_prefix && b_prefix ? nullptr : (a_prefix ? items_b : items_a);
      if (prefix.is_array() && other_items) {
        SchemaJson merged = SchemaJson::array();
        for (size_t i = 0; i < prefix.size(); ++i) {
          merged.push_back(
              merge(prefix[i], *other_items, str_cat(pointer, "/prefixItems/", i), depth + 1));
        }
        out["prefixItems"] = merged;
      } else {
        out["prefixItems"] = prefix;
      }
    }
    if (items_a && items_b) {
      out["items"] = merge(*items_a, *items_b, pointer + "/items", depth + 1);
    } else if (items_a || items_b) {
      out["items"] = items_a ? *items_a : *items_b;
    }
  }

  SchemaJson merge_keyword(const std::string& key, const SchemaJson& va, const SchemaJson& vb,
                           const std::string& pointer, int depth) {
    if (va == vb) return va;
    SchemaKeywordKind kind = schema_keyword_kind(key);
    if (kind == SchemaKeywordKind::Annotation || kind == SchemaKeywordKind::Unknown ||
        key == "$defs" || key == "definitions") {
      return va;
    }
    bool both_numbers = va.is_number() && vb.is_number();
    if (both_numbers && (key == "minLength" || key == "minItems" || key == "minProperties" ||
                         key == "minContains" || key == "minimum" || key == "exclusiveMinimum")) {
      return va.get<double>() >= vb.get<double>() ? va : vb;
    }
    if (both_numbers && (key == "maxLength" || key == "maxItems" || key == "maxProperties" ||
                         key == "maxContains" || key == "maximum" || key == "exclusiveMaximum")) {
      return va.get<double>() <= vb.get<double>() ? va : vb;
    }
    if (key == "required" && va.is_array() && vb.is_array()) {
      SchemaJson out = va;
      for (const auto& name : vb) {
        if (std::find(out.begin(), out.end(), name) == out.end()) out.push_back(name);
      }
      return out;
    }
    if (key == "uniqueItems" && va.is_boolean() && vb.is_boolean()) {
      return va.get<bool>() || vb.get<bool>();
    }
    if (key == "nullable" && va.is_boolean() && vb.is_boolean()) {
      return va.get<bool>() && vb.get<bool>();
    }
    if (key == "propertyNames") return merge(va, vb, pointer + "/propertyNames", depth + 1);
    if (key == "dependentRequired" && va.is_object() && vb.is_object()) {
      SchemaJson out = va;
      for (const auto& [name, list] : vb.items()) {
        out[name] =
            out.contains(name) ? merge_keyword("required", out[name], list, pointer, depth) : list;
      }
      return out;
    }
    if (key == "multipleOf" && va.is_number_unsigned() && vb.is_number_unsigned()) {
      uint64_t x = va.get<uint64_t>(), y = vb.get<uint64_t>();
      if (x > 0 && y > 0 && x / std::gcd(x, y) <= (uint64_t{1} << 40) / y) return std::lcm(x, y);
    }
    refuse(pointer + "/" + escape_json_pointer_token(key), "'allOf' gives two different '", key,
           "' values that cannot be merged into one");
  }

  const SchemaMergeContext& context_;
};

}  // namespace

SchemaJson merge_schemas(const SchemaJson& a, const SchemaJson& b,
                         const SchemaMergeContext& context, const std::string& pointer, int depth) {
  SchemaMerger merger(context);
  return merger.merge(a, b, pointer, depth);
}

SchemaJson flatten_schema(const SchemaJson& schema, const SchemaMergeContext& context,
                          const std::string& pointer, int depth) {
  SchemaMerger merger(context);
  return merger.flatten(schema, pointer, depth);
}

}  // namespace sluice
