// Compiling a JSON Schema document into SchemaNodes, in two passes: the first walks every
// subschema keyword to learn each location's base URI and draft and the resources ($id) and
// anchors it defines; the second converts the root's subschemas into nodes, then resolves each
// $ref (compiling its target on first use) until none is left.
#include <cmath>
#include <set>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/json_schema_keywords.h"
#include "engine/grammar/json_schema_validator.h"
#include "engine/grammar/json_schema_validator_node.h"
#include "engine/grammar/json_schema_validator_uri.h"

namespace sluice {
namespace {

using nlohmann::json;

// The base URI of a document without $id: relative references resolve against it and only
// fragments ("#...") find something.
constexpr std::string_view kDefaultBaseUri = "urn:sluice:schema";

std::string child_pointer(const std::string& pointer, std::string_view token) {
  return str_cat(pointer, "/", escape_json_pointer_token(token));
}

std::optional<JsonSchemaDraft> draft_of_meta_schema(std::string_view uri) {
  if (uri.find("json-schema.org") == std::string_view::npos) return std::nullopt;
  if (uri.find("draft-04") != std::string_view::npos) return JsonSchemaDraft::Draft4;
  if (uri.find("draft-06") != std::string_view::npos) return JsonSchemaDraft::Draft6;
  if (uri.find("draft-07") != std::string_view::npos) return JsonSchemaDraft::Draft7;
  if (uri.find("2019-09") != std::string_view::npos) return JsonSchemaDraft::Draft2019_09;
  if (uri.find("2020-12") != std::string_view::npos) return JsonSchemaDraft::Draft2020_12;
  return std::nullopt;
}

bool is_at_least(JsonSchemaDraft draft, JsonSchemaDraft minimum) {
  return static_cast<int>(draft) >= static_cast<int>(minimum);
}

// Where a subschema sits: the base URI its references resolve against and its draft.
struct SchemaLocation {
  std::string base_uri;
  JsonSchemaDraft draft = JsonSchemaDraft::Draft2020_12;
};

class SchemaCompiler {
 public:
  SchemaCompiler(const json& document, const std::string& source_name)
      : document_(document), source_name_(source_name) {}

  CompiledJsonSchema run() {
    JsonSchemaDraft draft = JsonSchemaDraft::Draft2020_12;
    resource_pointers_[std::string(kDefaultBaseUri)] = "";
    index_locations(document_, "", std::string(kDefaultBaseUri), draft, 0);
    const SchemaLocation& root = locations_.at("");
    compiled_.draft = root.draft;
    compile_node(document_, "", 0);
    // Resolving a $ref may compile new nodes with $refs of their own.
    for (size_t idx = 0; idx < compiled_.nodes.size(); ++idx) {
      if (!compiled_.nodes[idx].ref_text.empty()) {
        uint32_t target = resolve_ref(static_cast<uint32_t>(idx));
        compiled_.nodes[idx].ref = target;
      }
    }
    return std::move(compiled_);
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(const std::string& pointer, Args&&... args) const {
    fail(source_name_, ": ", pointer.empty() ? "/" : pointer, ": ", std::forward<Args>(args)...);
  }

  // Pass 1: base URIs, drafts, resources and anchors of every subschema reachable through the
  // subschema keywords (not through enum, const or unknown keywords: an $id there is data).
  void index_locations(const json& value, const std::string& pointer, std::string base,
                       JsonSchemaDraft draft, int depth) {
    if (depth > kMaxJsonSchemaNesting) {
      error(pointer, "schema nested deeper than ", kMaxJsonSchemaNesting, " subschemas");
    }
    if (!value.is_object()) {
      locations_[pointer] = {base, draft};
      return;
    }
    const bool is_ref_only =
        value.contains("$ref") && !is_at_least(draft, JsonSchemaDraft::Draft2019_09);
    const char* id_keyword = draft == JsonSchemaDraft::Draft4 ? "id" : "$id";
    auto id = value.find(id_keyword);
    if (id != value.end() && id->is_string() && !is_ref_only) {
      if (auto schema = value.find("$schema"); schema != value.end() && schema->is_string()) {
        if (auto named = draft_of_meta_schema(schema->get<std::string>())) draft = *named;
      }
      std::string id_text = id->get<std::string>();
      if (id_text.starts_with('#') && !is_at_least(draft, JsonSchemaDraft::Draft2019_09)) {
        anchor_pointers_[str_cat(split_uri_fragment(base).first, id_text)] = pointer;
      } else {
        auto [uri, fragment] = split_uri_fragment(resolve_uri_reference(base, id_text));
        base = uri;
        resource_pointers_[uri] = pointer;
        if (!fragment.empty()) anchor_pointers_[str_cat(uri, "#", fragment)] = pointer;
      }
    } else if (pointer.empty()) {
      if (auto schema = value.find("$schema"); schema != value.end() && schema->is_string()) {
        if (auto named = draft_of_meta_schema(schema->get<std::string>())) draft = *named;
      }
    }
    if (is_at_least(draft, JsonSchemaDraft::Draft2019_09)) {
      for (const char* keyword : {"$anchor", "$dynamicAnchor"}) {
        auto anchor = value.find(keyword);
        if (anchor != value.end() && anchor->is_string()) {
          anchor_pointers_[str_cat(base, "#", anchor->get<std::string>())] = pointer;
        }
      }
    }
    locations_[pointer] = {base, draft};
    for (auto keyword : kSingleSchemaKeywords) {
      auto it = value.find(keyword);
      if (it != value.end() && (it->is_object() || it->is_boolean())) {
        index_locations(*it, child_pointer(pointer, keyword), base, draft, depth + 1);
      }
    }
    for (auto keyword : kSchemaArrayKeywords) {
      auto it = value.find(keyword);
      if (it == value.end() || !it->is_array()) continue;
      for (size_t i = 0; i < it->size(); ++i) {
        index_locations((*it)[i], child_pointer(child_pointer(pointer, keyword), std::to_string(i)),
                        base, draft, depth + 1);
      }
    }
    for (auto keyword : kSchemaMapKeywords) {
      auto it = value.find(keyword);
      if (it == value.end() || !it->is_object()) continue;
      for (const auto& [name, subschema] : it->items()) {
        if (subschema.is_object() || subschema.is_boolean()) {
          index_locations(subschema, child_pointer(child_pointer(pointer, keyword), name), base,
                          draft, depth + 1);
        }
      }
    }
  }

  // The location of pointer, or of its nearest indexed ancestor (a $ref may point into data
  // that pass 1 did not walk).
  SchemaLocation location_of(std::string pointer) const {
    for (;;) {
      if (auto it = locations_.find(pointer); it != locations_.end()) return it->second;
      size_t slash = pointer.rfind('/');
      if (slash == std::string::npos) return locations_.at("");
      pointer.resize(slash);
    }
  }

  uint32_t compile_child(const json& parent, const std::string& pointer, std::string_view keyword,
                         int depth) {
    return compile_node(parent.at(std::string(keyword)), child_pointer(pointer, keyword),
                        depth + 1);
  }

  std::vector<uint32_t> compile_schema_array(const json& value, const std::string& pointer,
                                             int depth) {
    if (!value.is_array())
      error(pointer, "expected an array of schemas, got ", json_type_name(value));
    std::vector<uint32_t> out;
    for (size_t i = 0; i < value.size(); ++i) {
      out.push_back(compile_node(value[i], child_pointer(pointer, std::to_string(i)), depth + 1));
    }
    return out;
  }

  uint64_t count_value(const json& value, const std::string& pointer) const {
    if (value.is_number_unsigned()) return value.get<uint64_t>();
    if (value.is_number_integer() && value.get<int64_t>() >= 0) return value.get<uint64_t>();
    if (value.is_number_float()) {
      double d = value.get<double>();
      if (d >= 0 && d == std::floor(d) && d < 1.8e19) return static_cast<uint64_t>(d);
    }
    error(pointer, "expected a non-negative integer, got ", value.dump());
  }

  const json& number_value(const json& value, const std::string& pointer) const {
    if (!value.is_number()) error(pointer, "expected a number, got ", json_type_name(value));
    return value;
  }

  uint8_t type_bit(const json& name, const std::string& pointer) const {
    if (!name.is_string()) error(pointer, "expected a type name, got ", json_type_name(name));
    const std::string& text = name.get_ref<const std::string&>();
    if (text == "null") return kTypeNull;
    if (text == "boolean") return kTypeBoolean;
    if (text == "object") return kTypeObject;
    if (text == "array") return kTypeArray;
    if (text == "number") return kTypeNumber;
    if (text == "string") return kTypeString;
    if (text == "integer") return kTypeInteger;
    error(pointer, "unknown type \"", text, "\"");
  }

  std::vector<std::string> string_list(const json& value, const std::string& pointer) const {
    if (!value.is_array())
      error(pointer, "expected an array of strings, got ", json_type_name(value));
    std::vector<std::string> out;
    for (size_t i = 0; i < value.size(); ++i) {
      if (!value[i].is_string()) {
        error(child_pointer(pointer, std::to_string(i)), "expected a string, got ",
              json_type_name(value[i]));
      }
      out.push_back(value[i].get<std::string>());
    }
    return out;
  }

  std::shared_ptr<const JsonSchemaPattern> pattern_value(const std::string& pattern,
                                                         const std::string& pointer) const {
    return JsonSchemaPattern::compile(pattern, str_cat(source_name_, ": ", pointer));
  }

  // Pass 2: the node of the subschema value at pointer (memoized by pointer).
  uint32_t compile_node(const json& value, const std::string& pointer, int depth) {
    if (auto it = node_by_pointer_.find(pointer); it != node_by_pointer_.end()) return it->second;
    if (depth > kMaxJsonSchemaNesting) {
      error(pointer, "schema nested deeper than ", kMaxJsonSchemaNesting, " subschemas");
    }
    const auto idx = static_cast<uint32_t>(compiled_.nodes.size());
    compiled_.nodes.emplace_back();
    node_by_pointer_[pointer] = idx;
    SchemaNode node;
    node.pointer = pointer;
    SchemaLocation location = location_of(pointer);
    node.draft = location.draft;
    if (value.is_boolean()) {
      node.boolean = value.get<bool>();
    } else if (value.is_object()) {
      read_keywords(value, pointer, location, depth, node);
    } else {
      error(pointer, "expected a schema (an object or a boolean), got ", json_type_name(value));
    }
    compiled_.nodes[idx] = std::move(node);
    return idx;
  }

  void read_keywords(const json& value, const std::string& pointer, const SchemaLocation& location,
                     int depth, SchemaNode& node) {
    const JsonSchemaDraft draft = location.draft;
    const bool is_2019 = is_at_least(draft, JsonSchemaDraft::Draft2019_09);
    auto at = [&](std::string_view keyword) { return child_pointer(pointer, keyword); };
    if (auto ref = value.find("$ref"); ref != value.end()) {
      if (!ref->is_string()) error(at("$ref"), "expected a string, got ", json_type_name(*ref));
      node.ref_text = ref->get<std::string>();
      node.ref_base = location.base_uri;
      if (!is_2019) return;  // before 2019-09 the keywords beside $ref are ignored
    }
    for (const char* keyword : {"$recursiveRef", "$dynamicRef"}) {
      if (value.contains(keyword)) error(at(keyword), keyword, " is not supported");
    }
    if (auto type = value.find("type"); type != value.end()) {
      if (type->is_array()) {
        for (size_t i = 0; i < type->size(); ++i) {
          node.type_mask |= type_bit((*type)[i], child_pointer(at("type"), std::to_string(i)));
        }
        if (node.type_mask == 0) node.type_mask = 0x80;  // an empty list: nothing matches
      } else {
        node.type_mask = type_bit(*type, at("type"));
      }
    }
    if (auto it = value.find("enum"); it != value.end()) {
      if (!it->is_array()) error(at("enum"), "expected an array, got ", json_type_name(*it));
      node.enum_values = *it;
    }
    if (auto it = value.find("const"); it != value.end() && draft != JsonSchemaDraft::Draft4) {
      node.const_value = *it;
    }
    read_number_keywords(value, pointer, draft, node);
    read_count(value, pointer, "minLength", node.min_length);
    read_count(value, pointer, "maxLength", node.max_length);
    read_count(value, pointer, "minItems", node.min_items);
    read_count(value, pointer, "maxItems", node.max_items);
    read_count(value, pointer, "minProperties", node.min_properties);
    read_count(value, pointer, "maxProperties", node.max_properties);
    if (is_2019) {
      read_count(value, pointer, "minContains", node.min_contains);
      read_count(value, pointer, "maxContains", node.max_contains);
    }
    if (auto it = value.find("pattern"); it != value.end()) {
      if (!it->is_string()) error(at("pattern"), "expected a string, got ", json_type_name(*it));
      node.pattern = pattern_value(it->get<std::string>(), at("pattern"));
    }
    if (auto it = value.find("format"); it != value.end()) {
      if (!it->is_string()) error(at("format"), "expected a string, got ", json_type_name(*it));
      node.format = it->get<std::string>();
    }
    read_array_keywords(value, pointer, draft, depth, node);
    read_object_keywords(value, pointer, draft, depth, node);
    for (auto [keyword, list] : {std::pair{"allOf", &node.all_of}, std::pair{"anyOf", &node.any_of},
                                 std::pair{"oneOf", &node.one_of}}) {
      if (auto it = value.find(keyword); it != value.end()) {
        *list = compile_schema_array(*it, at(keyword), depth);
        if (list->empty()) error(at(keyword), "expected a non-empty array of schemas");
      }
    }
    if (value.contains("not")) node.not_schema = compile_child(value, pointer, "not", depth);
    if (is_at_least(draft, JsonSchemaDraft::Draft7) && value.contains("if")) {
      node.if_schema = compile_child(value, pointer, "if", depth);
      if (value.contains("then")) node.then_schema = compile_child(value, pointer, "then", depth);
      if (value.contains("else")) node.else_schema = compile_child(value, pointer, "else", depth);
    }
    if (is_2019) {
      if (value.contains("unevaluatedItems")) {
        node.unevaluated_items = compile_child(value, pointer, "unevaluatedItems", depth);
        compiled_.has_unevaluated = true;
      }
      if (value.contains("unevaluatedProperties")) {
        node.unevaluated_properties = compile_child(value, pointer, "unevaluatedProperties", depth);
        compiled_.has_unevaluated = true;
      }
    }
  }

  void read_count(const json& value, const std::string& pointer, std::string_view keyword,
                  std::optional<uint64_t>& out) const {
    auto it = value.find(keyword);
    if (it != value.end()) out = count_value(*it, child_pointer(pointer, keyword));
  }

  void read_number_keywords(const json& value, const std::string& pointer, JsonSchemaDraft draft,
                            SchemaNode& node) const {
    auto at = [&](std::string_view keyword) { return child_pointer(pointer, keyword); };
    if (auto it = value.find("multipleOf"); it != value.end()) {
      node.multiple_of = number_value(*it, at("multipleOf"));
      if (!(it->get<double>() > 0)) error(at("multipleOf"), "expected a number above 0");
    }
    if (auto it = value.find("minimum"); it != value.end())
      node.minimum = number_value(*it, at("minimum"));
    if (auto it = value.find("maximum"); it != value.end())
      node.maximum = number_value(*it, at("maximum"));
    for (auto [keyword, bound, exclusive] :
         {std::tuple{"exclusiveMinimum", &node.minimum, &node.exclusive_minimum},
          std::tuple{"exclusiveMaximum", &node.maximum, &node.exclusive_maximum}}) {
      auto it = value.find(keyword);
      if (it == value.end()) continue;
      if (draft == JsonSchemaDraft::Draft4) {
        if (!it->is_boolean()) error(at(keyword), "expected a boolean, got ", json_type_name(*it));
        if (it->get<bool>() && bound->has_value()) {
          *exclusive = std::move(**bound);
          bound->reset();
        }
      } else {
        *exclusive = number_value(*it, at(keyword));
      }
    }
  }

  void read_array_keywords(const json& value, const std::string& pointer, JsonSchemaDraft draft,
                           int depth, SchemaNode& node) {
    auto at = [&](std::string_view keyword) { return child_pointer(pointer, keyword); };
    if (draft == JsonSchemaDraft::Draft2020_12) {
      if (auto it = value.find("prefixItems"); it != value.end()) {
        node.prefix_items = compile_schema_array(*it, at("prefixItems"), depth);
      }
      if (value.contains("items")) node.items = compile_child(value, pointer, "items", depth);
    } else if (auto it = value.find("items"); it != value.end()) {
      if (it->is_array()) {
        node.prefix_items = compile_schema_array(*it, at("items"), depth);
        if (value.contains("additionalItems")) {
          node.items = compile_child(value, pointer, "additionalItems", depth);
          node.items_keyword = "additionalItems";
        }
      } else {
        node.items = compile_child(value, pointer, "items", depth);
      }
    }
    if (draft != JsonSchemaDraft::Draft4 && value.contains("contains")) {
      node.contains = compile_child(value, pointer, "contains", depth);
    }
    if (auto it = value.find("uniqueItems"); it != value.end()) {
      if (!it->is_boolean())
        error(at("uniqueItems"), "expected a boolean, got ", json_type_name(*it));
      node.unique_items = it->get<bool>();
    }
  }

  void read_object_keywords(const json& value, const std::string& pointer, JsonSchemaDraft draft,
                            int depth, SchemaNode& node) {
    auto at = [&](std::string_view keyword) { return child_pointer(pointer, keyword); };
    auto schema_map = [&](std::string_view keyword) -> const json* {
      auto it = value.find(keyword);
      if (it == value.end()) return nullptr;
      if (!it->is_object()) error(at(keyword), "expected an object, got ", json_type_name(*it));
      return &*it;
    };
    if (const json* properties = schema_map("properties")) {
      for (const auto& [name, subschema] : properties->items()) {
        node.properties[name] =
            compile_node(subschema, child_pointer(at("properties"), name), depth + 1);
      }
    }
    if (const json* patterns = schema_map("patternProperties")) {
      for (const auto& [pattern, subschema] : patterns->items()) {
        std::string sub_pointer = child_pointer(at("patternProperties"), pattern);
        node.pattern_properties.emplace_back(pattern_value(pattern, sub_pointer),
                                             compile_node(subschema, sub_pointer, depth + 1));
      }
    }
    if (value.contains("additionalProperties")) {
      node.additional_properties = compile_child(value, pointer, "additionalProperties", depth);
    }
    if (auto it = value.find("required"); it != value.end()) {
      node.required = string_list(*it, at("required"));
    }
    const bool is_2019 = is_at_least(draft, JsonSchemaDraft::Draft2019_09);
    if (const json* dependent = schema_map(is_2019 ? "dependentRequired" : "dependencies")) {
      node.dependencies_keyword = is_2019 ? "dependentRequired" : "dependencies";
      const std::string base = at(node.dependencies_keyword);
      for (const auto& [name, dependency] : dependent->items()) {
        if (!is_2019 && !dependency.is_array()) {
          node.dependent_schemas.emplace_back(
              name, compile_node(dependency, child_pointer(base, name), depth + 1));
        } else {
          node.dependent_required.emplace_back(name,
                                               string_list(dependency, child_pointer(base, name)));
        }
      }
    }
    if (is_2019) {
      if (const json* dependent = schema_map("dependentSchemas")) {
        for (const auto& [name, subschema] : dependent->items()) {
          node.dependent_schemas.emplace_back(
              name,
              compile_node(subschema, child_pointer(at("dependentSchemas"), name), depth + 1));
        }
      }
    }
    if (draft != JsonSchemaDraft::Draft4 && value.contains("propertyNames")) {
      node.property_names = compile_child(value, pointer, "propertyNames", depth);
    }
  }

  uint32_t resolve_ref(uint32_t idx) {
    const SchemaNode& node = compiled_.nodes[idx];
    const std::string where = child_pointer(node.pointer, "$ref");
    const std::string ref_text = node.ref_text;
    std::string resolved = resolve_uri_reference(node.ref_base, ref_text);
    auto [uri, fragment] = split_uri_fragment(resolved);
    auto resource = resource_pointers_.find(uri);
    if (resource == resource_pointers_.end()) {
      error(where, "remote $ref \"", ref_text, "\" (", resolved,
            ") is not supported: only references within this document resolve");
    }
    std::string target;
    if (fragment.empty()) {
      target = resource->second;
    } else if (fragment[0] == '/') {
      target = resource->second + percent_decode(fragment);
    } else {
      auto anchor = anchor_pointers_.find(str_cat(uri, "#", fragment));
      if (anchor == anchor_pointers_.end()) {
        error(where, "$ref \"", ref_text, "\" names an anchor that is not defined");
      }
      target = anchor->second;
    }
    const json* value = nullptr;
    try {
      json::json_pointer json_pointer(target);
      if (document_.contains(json_pointer)) value = &document_.at(json_pointer);
    } catch (const json::exception&) {
      value = nullptr;
    }
    if (value == nullptr) error(where, "$ref \"", ref_text, "\" points to nothing in the document");
    return compile_node(*value, target, 0);
  }

  const json& document_;
  const std::string& source_name_;
  CompiledJsonSchema compiled_;
  std::map<std::string, SchemaLocation> locations_;       // by document pointer
  std::map<std::string, std::string> resource_pointers_;  // absolute URI -> document pointer
  std::map<std::string, std::string> anchor_pointers_;    // "uri#anchor" -> document pointer
  std::map<std::string, uint32_t> node_by_pointer_;
};

}  // namespace

CompiledJsonSchema compile_json_schema_nodes(std::string_view schema_text,
                                             const std::string& source_name) {
  const json document = parse_json_text<json>(schema_text, source_name);
  return SchemaCompiler(document, source_name).run();
}

}  // namespace sluice
