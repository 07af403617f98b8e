#include "engine/grammar/json_schema_validator.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>

#include "engine/core/error.h"
#include "engine/core/json_depth.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/json_schema_formats.h"
#include "engine/grammar/json_schema_validator_node.h"
#include "engine/grammar/json_schema_validator_uri.h"
#include "engine/grammar/json_schema_validator_values.h"

namespace sluice {
namespace {

using nlohmann::json;

std::string type_names(uint8_t mask) {
  static constexpr std::pair<uint8_t, const char*> kNames[] = {
      {kTypeNull, "null"},      {kTypeBoolean, "boolean"}, {kTypeObject, "object"},
      {kTypeArray, "array"},    {kTypeNumber, "number"},   {kTypeString, "string"},
      {kTypeInteger, "integer"}};
  std::string out;
  for (auto [bit, name] : kNames) {
    if (mask & bit) out += str_cat(out.empty() ? "" : " or ", name);
  }
  return out.empty() ? "no type" : out;
}

bool type_matches(uint8_t mask, const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return mask & kTypeNull;
    case json::value_t::boolean:
      return mask & kTypeBoolean;
    case json::value_t::object:
      return mask & kTypeObject;
    case json::value_t::array:
      return mask & kTypeArray;
    case json::value_t::string:
      return mask & kTypeString;
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return (mask & kTypeNumber) || ((mask & kTypeInteger) && is_integer_value(value));
    default:
      return false;
  }
}

// Whether value nests deeper than max_depth (an iterative walk: the value may be deep).
bool nests_deeper_than(const json& value, int max_depth) {
  std::vector<std::pair<const json*, int>> pending{{&value, 0}};
  while (!pending.empty()) {
    auto [current, depth] = pending.back();
    pending.pop_back();
    if (!current->is_structured()) continue;
    if (depth + 1 > max_depth) return true;
    for (const json& child : *current) pending.emplace_back(&child, depth + 1);
  }
  return false;
}

}  // namespace

// One validation of one instance: the path to the current value, the $refs being followed and
// the failures found. Annotations (for unevaluatedItems/Properties) are which elements or members
// of the current value some subschema that passed has evaluated.
class JsonSchemaEvaluation {
 public:
  JsonSchemaEvaluation(const CompiledJsonSchema& schema, std::vector<JsonSchemaFailure>* failures)
      : schema_(schema), failures_(failures) {}

  bool run(const json& instance) {
    if (nests_deeper_than(instance, kMaxJsonDepth)) {
      add_failure("", "", str_cat("the instance nests deeper than ", kMaxJsonDepth, " levels"));
      return false;
    }
    Annotations annotations = annotations_for(instance);
    return evaluate(0, instance, annotations.get(), true);
  }

 private:
  struct Annotations {
    std::vector<bool> evaluated;  // [num elements or members]; empty when not tracked
    bool is_tracked = false;
    Annotations* get() { return is_tracked ? this : nullptr; }
    void merge(const Annotations& other) {
      for (size_t i = 0; i < evaluated.size(); ++i)
        evaluated[i] = evaluated[i] || other.evaluated[i];
    }
  };
  struct PathToken {
    const std::string* key = nullptr;  // null for an array index
    size_t index = 0;
  };

  Annotations annotations_for(const json& instance) const {
    Annotations out;
    out.is_tracked = schema_.has_unevaluated;
    if (out.is_tracked && instance.is_structured()) out.evaluated.assign(instance.size(), false);
    return out;
  }

  std::string instance_pointer() const {
    std::string out;
    for (const PathToken& token : path_) {
      out += "/";
      out += token.key ? escape_json_pointer_token(*token.key) : std::to_string(token.index);
    }
    return out;
  }

  void add_failure(const std::string& schema_pointer, std::string_view keyword,
                   std::string message) {
    if (failures_ == nullptr || failures_->size() >= kMaxJsonSchemaFailures) return;
    failures_->push_back(
        {instance_pointer(), schema_pointer, std::string(keyword), std::move(message)});
  }

  // Records a failure of node's keyword when report (not inside anyOf, not, ...). Returns false.
  template <typename... Args>
  bool fail(const SchemaNode& node, std::string_view keyword, bool report, Args&&... args) {
    if (report) {
      add_failure(keyword.empty() ? node.pointer : str_cat(node.pointer, "/", keyword), keyword,
                  str_cat(std::forward<Args>(args)...));
    }
    return false;
  }

  // Whether to go on after a failure: only to list more failures.
  bool is_exhaustive(bool report) const { return report && failures_ != nullptr; }

  // Evaluates node against a child of the current value (element index or member key).
  bool evaluate_child(uint32_t node_idx, const json& child, PathToken token, bool report) {
    path_.push_back(token);
    Annotations annotations = annotations_for(child);
    bool valid = evaluate(node_idx, child, annotations.get(), report);
    path_.pop_back();
    return valid;
  }

  // Evaluates node_idx in place (same value), merging its annotations into annotations if valid.
  bool evaluate_in_place(uint32_t node_idx, const json& instance, Annotations* annotations,
                         bool report) {
    if (annotations == nullptr) return evaluate(node_idx, instance, nullptr, report);
    Annotations own = *annotations;
    std::fill(own.evaluated.begin(), own.evaluated.end(), false);
    bool valid = evaluate(node_idx, instance, &own, report);
    if (valid) annotations->merge(own);
    return valid;
  }

  bool evaluate(uint32_t node_idx, const json& instance, Annotations* annotations, bool report) {
    const SchemaNode& node = schema_.nodes[node_idx];
    if (node.boolean) {
      return *node.boolean ||
             fail(node, "", report, "no value is allowed here (the schema is false)");
    }
    if (depth_ >= kMaxJsonSchemaEvaluationDepth) {
      return fail(node, "", report, "the schema's evaluation nests deeper than ",
                  kMaxJsonSchemaEvaluationDepth, " subschemas");
    }
    Annotations own;  // where a caller does not want the annotations (not, propertyNames)
    if (annotations == nullptr && schema_.has_unevaluated) {
      own = annotations_for(instance);
      annotations = &own;
    }
    ++depth_;
    bool valid = evaluate_keywords(node, node_idx, instance, annotations, report);
    --depth_;
    return valid;
  }

  bool evaluate_keywords(const SchemaNode& node, uint32_t node_idx, const json& instance,
                         Annotations* annotations, bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    auto done = [&](bool ok) {
      valid = valid && ok;
      return !valid && !exhaustive;
    };
    if (node.ref != kNoSchemaNode) {
      for (auto it = active_refs_.rbegin(); it != active_refs_.rend() && it->second == &instance;
           ++it) {
        if (it->first == node_idx) {
          return fail(node, "$ref", report,
                      "the $ref comes back to this schema without moving into the instance");
        }
      }
      active_refs_.emplace_back(node_idx, &instance);
      bool ok = evaluate_in_place(node.ref, instance, annotations, report);
      active_refs_.pop_back();
      if (done(ok)) return false;
    }
    if (node.type_mask != 0 && !type_matches(node.type_mask, instance)) {
      if (done(fail(node, "type", report, "expected ", type_names(node.type_mask), ", got ",
                    json_type_name(instance)))) {
        return false;
      }
    }
    if (node.enum_values && std::find(node.enum_values->begin(), node.enum_values->end(),
                                      instance) == node.enum_values->end()) {
      if (done(fail(node, "enum", report, "the value is not one of the ", node.enum_values->size(),
                    " values of enum"))) {
        return false;
      }
    }
    if (node.const_value && *node.const_value != instance) {
      if (done(fail(node, "const", report, "the value is not ", node.const_value->dump())))
        return false;
    }
    if (instance.is_number() && done(evaluate_number(node, instance, report))) return false;
    if (instance.is_string() && done(evaluate_string(node, instance, report))) return false;
    if (instance.is_array() && done(evaluate_array(node, instance, annotations, report)))
      return false;
    if (instance.is_object() && done(evaluate_object(node, instance, annotations, report))) {
      return false;
    }
    if (done(evaluate_combinators(node, instance, annotations, report))) return false;
    if (node.unevaluated_items != kNoSchemaNode && instance.is_array()) {
      assert(annotations != nullptr);  // has_unevaluated turns tracking on
      for (size_t i = 0; i < instance.size(); ++i) {
        if (annotations->evaluated[i]) continue;
        if (done(evaluate_child(node.unevaluated_items, instance[i], {nullptr, i}, report))) {
          return false;
        }
        annotations->evaluated[i] = true;
      }
    }
    if (node.unevaluated_properties != kNoSchemaNode && instance.is_object()) {
      assert(annotations != nullptr);  // has_unevaluated turns tracking on
      size_t i = 0;
      for (auto it = instance.begin(); it != instance.end(); ++it, ++i) {
        if (annotations->evaluated[i]) continue;
        if (done(evaluate_child(node.unevaluated_properties, it.value(), {&it.key(), 0}, report))) {
          return false;
        }
        annotations->evaluated[i] = true;
      }
    }
    return valid;
  }

  bool evaluate_number(const SchemaNode& node, const json& instance, bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    auto check = [&](bool ok, std::string_view keyword, const json& bound, const char* relation) {
      if (ok) return true;
      valid = fail(node, keyword, report, instance.dump(), " is ", relation, " ", bound.dump());
      return exhaustive;
    };
    if (node.multiple_of && !check(is_multiple_of(instance, *node.multiple_of), "multipleOf",
                                   *node.multiple_of, "not a multiple of")) {
      return false;
    }
    if (node.minimum && !check(compare_numbers(instance, *node.minimum) >= 0, "minimum",
                               *node.minimum, "less than the minimum")) {
      return false;
    }
    if (node.maximum && !check(compare_numbers(instance, *node.maximum) <= 0, "maximum",
                               *node.maximum, "more than the maximum")) {
      return false;
    }
    const char* exclusive_min =
        node.draft == JsonSchemaDraft::Draft4 ? "minimum" : "exclusiveMinimum";
    const char* exclusive_max =
        node.draft == JsonSchemaDraft::Draft4 ? "maximum" : "exclusiveMaximum";
    if (node.exclusive_minimum &&
        !check(compare_numbers(instance, *node.exclusive_minimum) > 0, exclusive_min,
               *node.exclusive_minimum, "not more than the exclusive minimum")) {
      return false;
    }
    if (node.exclusive_maximum &&
        !check(compare_numbers(instance, *node.exclusive_maximum) < 0, exclusive_max,
               *node.exclusive_maximum, "not less than the exclusive maximum")) {
      return false;
    }
    return valid;
  }

  bool evaluate_string(const SchemaNode& node, const json& instance, bool report) {
    const bool exhaustive = is_exhaustive(report);
    const std::string& text = instance.get_ref<const std::string&>();
    bool valid = true;
    if (node.min_length || node.max_length) {
      size_t length = count_code_points(text);
      if (node.min_length && length < *node.min_length) {
        valid = fail(node, "minLength", report, "the string has ", length,
                     " characters, fewer than minLength ", *node.min_length);
        if (!exhaustive) return false;
      }
      if (node.max_length && length > *node.max_length) {
        valid = fail(node, "maxLength", report, "the string has ", length,
                     " characters, more than maxLength ", *node.max_length);
        if (!exhaustive) return false;
      }
    }
    if (node.pattern) {
      std::optional<bool> found = node.pattern->search(text);
      if (!found) {
        valid = fail(node, "pattern", report, "the string could not be checked against pattern \"",
                     node.pattern->text(), "\" (too long or too ambiguous for the regex engine)");
      } else if (!*found) {
        valid = fail(node, "pattern", report, "the string does not match pattern \"",
                     node.pattern->text(), "\"");
      }
      if (!valid && !exhaustive) return false;
    }
    if (!node.format.empty()) {
      std::optional<bool> matches = json_schema_format_matches(node.format, text);
      if (matches && !*matches) {
        valid = fail(node, "format", report, "the string is not a valid ", node.format);
      }
    }
    return valid;
  }

  bool evaluate_array(const SchemaNode& node, const json& instance, Annotations* annotations,
                      bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    auto done = [&](bool ok) {
      valid = valid && ok;
      return !valid && !exhaustive;
    };
    const size_t size = instance.size();
    for (size_t i = 0; i < size; ++i) {
      uint32_t item_node = i < node.prefix_items.size() ? node.prefix_items[i] : node.items;
      if (item_node == kNoSchemaNode) break;
      if (done(evaluate_child(item_node, instance[i], {nullptr, i}, report))) return false;
      if (annotations) annotations->evaluated[i] = true;
    }
    if (node.contains != kNoSchemaNode) {
      uint64_t min_contains = node.min_contains.value_or(1);
      uint64_t num_matches = 0;
      const bool marks = annotations && node.draft == JsonSchemaDraft::Draft2020_12;
      for (size_t i = 0; i < size; ++i) {
        if (evaluate_child(node.contains, instance[i], {nullptr, i}, false)) {
          ++num_matches;
          if (marks) annotations->evaluated[i] = true;
          if (!marks && !node.max_contains && num_matches >= min_contains) break;
        }
      }
      if (num_matches < min_contains) {
        if (done(fail(node, node.min_contains ? "minContains" : "contains", report, num_matches,
                      " elements match contains, fewer than ", min_contains))) {
          return false;
        }
      }
      if (node.max_contains && num_matches > *node.max_contains) {
        if (done(fail(node, "maxContains", report, num_matches,
                      " elements match contains, more than maxContains ", *node.max_contains))) {
          return false;
        }
      }
    }
    if (node.min_items && size < *node.min_items) {
      if (done(fail(node, "minItems", report, "the array has ", size,
                    " elements, fewer than minItems ", *node.min_items))) {
        return false;
      }
    }
    if (node.max_items && size > *node.max_items) {
      if (done(fail(node, "maxItems", report, "the array has ", size,
                    " elements, more than maxItems ", *node.max_items))) {
        return false;
      }
    }
    if (node.unique_items) {
      if (auto duplicate = find_duplicate(instance)) {
        if (done(fail(node, "uniqueItems", report, "elements ", duplicate->first, " and ",
                      duplicate->second, " are equal"))) {
          return false;
        }
      }
    }
    return valid;
  }

  bool evaluate_members(const SchemaNode& node, const json& instance, Annotations* annotations,
                        bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    size_t i = 0;
    for (auto it = instance.begin(); it != instance.end(); ++it, ++i) {
      const std::string& key = it.key();
      bool is_matched = false;
      if (auto property = node.properties.find(key); property != node.properties.end()) {
        is_matched = true;
        valid = evaluate_child(property->second, it.value(), {&key, 0}, report) && valid;
        if (!valid && !exhaustive) return false;
      }
      for (const auto& [pattern, pattern_node] : node.pattern_properties) {
        std::optional<bool> found = pattern->search(key);
        if (!found) {
          valid = fail(node, "patternProperties", report, "the name \"", key,
                       "\" could not be checked against pattern \"", pattern->text(), "\"");
        } else if (*found) {
          is_matched = true;
          valid = evaluate_child(pattern_node, it.value(), {&key, 0}, report) && valid;
        }
        if (!valid && !exhaustive) return false;
      }
      if (!is_matched && node.additional_properties != kNoSchemaNode) {
        is_matched = true;
        const SchemaNode& additional = schema_.nodes[node.additional_properties];
        if (additional.boolean == false) {
          path_.push_back({&key, 0});
          valid =
              fail(node, "additionalProperties", report, "property \"", key, "\" is not allowed");
          path_.pop_back();
        } else {
          valid =
              evaluate_child(node.additional_properties, it.value(), {&key, 0}, report) && valid;
        }
        if (!valid && !exhaustive) return false;
      }
      if (is_matched && annotations) annotations->evaluated[i] = true;
    }
    return valid;
  }

  bool evaluate_object(const SchemaNode& node, const json& instance, Annotations* annotations,
                       bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    auto done = [&](bool ok) {
      valid = valid && ok;
      return !valid && !exhaustive;
    };
    if ((!node.properties.empty() || !node.pattern_properties.empty() ||
         node.additional_properties != kNoSchemaNode) &&
        done(evaluate_members(node, instance, annotations, report))) {
      return false;
    }
    for (const std::string& name : node.required) {
      if (!instance.contains(name) &&
          done(fail(node, "required", report, "the required property \"", name, "\" is missing"))) {
        return false;
      }
    }
    for (const auto& [name, needed] : node.dependent_required) {
      if (!instance.contains(name)) continue;
      for (const std::string& other : needed) {
        if (!instance.contains(other) &&
            done(fail(node, node.dependencies_keyword, report, "property \"", name,
                      "\" needs property \"", other, "\", which is missing"))) {
          return false;
        }
      }
    }
    for (const auto& [name, dependent] : node.dependent_schemas) {
      if (instance.contains(name) &&
          done(evaluate_in_place(dependent, instance, annotations, report))) {
        return false;
      }
    }
    if (node.property_names != kNoSchemaNode) {
      for (auto it = instance.begin(); it != instance.end(); ++it) {
        json name = it.key();
        if (!evaluate(node.property_names, name, nullptr, false) &&
            done(fail(node, "propertyNames", report, "the property name \"", it.key(),
                      "\" does not match propertyNames"))) {
          return false;
        }
      }
    }
    if (node.min_properties && instance.size() < *node.min_properties) {
      if (done(fail(node, "minProperties", report, "the object has ", instance.size(),
                    " properties, fewer than minProperties ", *node.min_properties))) {
        return false;
      }
    }
    if (node.max_properties && instance.size() > *node.max_properties) {
      if (done(fail(node, "maxProperties", report, "the object has ", instance.size(),
                    " properties, more than maxProperties ", *node.max_properties))) {
        return false;
      }
    }
    return valid;
  }

  bool evaluate_combinators(const SchemaNode& node, const json& instance, Annotations* annotations,
                            bool report) {
    const bool exhaustive = is_exhaustive(report);
    bool valid = true;
    auto done = [&](bool ok) {
      valid = valid && ok;
      return !valid && !exhaustive;
    };
    for (uint32_t branch : node.all_of) {
      if (done(evaluate_in_place(branch, instance, annotations, report))) return false;
    }
    if (!node.any_of.empty()) {
      bool any = false;
      for (uint32_t branch : node.any_of) {
        any = evaluate_in_place(branch, instance, annotations, false) || any;
        if (any && annotations == nullptr) break;
      }
      if (!any && done(fail(node, "anyOf", report, "the value matches none of the ",
                            node.any_of.size(), " schemas of anyOf"))) {
        return false;
      }
    }
    if (!node.one_of.empty()) {
      std::vector<size_t> matched;
      for (size_t i = 0; i < node.one_of.size() && matched.size() < 2; ++i) {
        if (evaluate_in_place(node.one_of[i], instance, annotations, false)) matched.push_back(i);
      }
      if (matched.size() != 1) {
        bool ok = matched.empty() ? fail(node, "oneOf", report, "the value matches none of the ",
                                         node.one_of.size(), " schemas of oneOf")
                                  : fail(node, "oneOf", report,
                                         "the value matches more than one schema of oneOf (",
                                         matched[0], " and ", matched[1], ")");
        if (done(ok)) return false;
      }
    }
    if (node.not_schema != kNoSchemaNode && evaluate(node.not_schema, instance, nullptr, false)) {
      if (done(fail(node, "not", report, "the value matches the schema of not"))) return false;
    }
    if (node.if_schema != kNoSchemaNode) {
      if (evaluate_in_place(node.if_schema, instance, annotations, false)) {
        if (node.then_schema != kNoSchemaNode &&
            done(evaluate_in_place(node.then_schema, instance, annotations, report))) {
          return false;
        }
      } else if (node.else_schema != kNoSchemaNode &&
                 done(evaluate_in_place(node.else_schema, instance, annotations, report))) {
        return false;
      }
    }
    return valid;
  }

  const CompiledJsonSchema& schema_;
  std::vector<JsonSchemaFailure>* failures_;  // null: only the verdict is wanted
  std::vector<PathToken> path_;
  std::vector<std::pair<uint32_t, const json*>> active_refs_;  // (node with $ref, value)
  int depth_ = 0;
};

JsonSchemaValidator JsonSchemaValidator::compile(std::string_view schema_text,
                                                 const std::string& source_name) {
  JsonSchemaValidator validator;
  validator.schema_ = std::make_shared<const CompiledJsonSchema>(
      compile_json_schema_nodes(schema_text, source_name));
  return validator;
}

std::vector<JsonSchemaFailure> JsonSchemaValidator::validate(const nlohmann::json& instance) const {
  assert(schema_ != nullptr);  // made by compile
  std::vector<JsonSchemaFailure> failures;
  if (!JsonSchemaEvaluation(*schema_, &failures).run(instance) && failures.empty()) {
    failures.push_back({"", "", "", "the value is not valid"});  // a failure nothing reported
  }
  return failures;
}

bool JsonSchemaValidator::is_valid(const nlohmann::json& instance) const {
  assert(schema_ != nullptr);  // made by compile
  return JsonSchemaEvaluation(*schema_, nullptr).run(instance);
}

std::string describe_json_schema_failure(const JsonSchemaFailure& failure) {
  return str_cat(failure.instance_pointer.empty() ? "/" : failure.instance_pointer, ": ",
                 failure.message, " (",
                 failure.schema_pointer.empty() ? "/" : failure.schema_pointer, ")");
}

}  // namespace sluice
