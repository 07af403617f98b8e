#include "engine/grammar/json_schema_grammar.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_converter.h"

namespace sluice {
namespace {

// The whitespace rules of JsonWhitespace, as GBNF.
constexpr const char* kFlexibleWhitespace = R"(ws ::= ( " " | "\n" [ \t]{0,20} )?)";
constexpr const char* kCompactWhitespace = R"(ws ::= "")";

// The primitives every JSON grammar shares, as GBNF (the formats' in json_schema_strings.cpp).
constexpr const char* kJsonPrimitives = R"(
json-hex4 ::= [0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}
json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" json-hex4 )
string ::= "\"" json-char* "\""
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
)";

// The kinds of JSON value, in the order a schema without "type" lists them.
constexpr const char* kValueKinds[] = {"null", "boolean", "object", "array", "string", "number"};

// value with every integral float written as an integer (1500.0 -> 1500): how a value's JSON
// text is checked against a grammar, whose numbers have no trailing ".0".
SchemaJson canonical_numbers(const SchemaJson& value) {
  if (value.is_number_float()) {
    double d = value.get<double>();
    if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e15)
      return static_cast<int64_t>(d);
    return value;
  }
  if (value.is_array() || value.is_object()) {
    SchemaJson out = value;
    for (auto& item : out) item = canonical_numbers(item);
    return out;
  }
  return value;
}

bool value_has_type(const SchemaJson& value, const std::string& type) {
  if (type == "null") return value.is_null();
  if (type == "boolean") return value.is_boolean();
  if (type == "object") return value.is_object();
  if (type == "array") return value.is_array();
  if (type == "string") return value.is_string();
  if (type == "number") return value.is_number();
  if (type == "integer") {
    return value.is_number_integer() ||
           (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  }
  return false;
}

const char* whitespace_rule(JsonWhitespace whitespace) {
  return whitespace == JsonWhitespace::Compact ? kCompactWhitespace : kFlexibleWhitespace;
}

// Removes the keyword (or array item) at pointer from schema; returns its pointer, or "" when
// pointer names nothing in it.
std::string erase_at(SchemaJson& schema, const SchemaJson::json_pointer& at) {
  if (at.empty() || !schema.contains(at)) return "";
  SchemaJson& parent = schema.at(at.parent_pointer());
  const std::string last = at.back();
  if (parent.is_object()) {
    erase_schema_keys(parent, {last});
    return at.to_string();
  }
  if (parent.is_array()) {
    parent.erase(std::stoul(last));
    return at.to_string();
  }
  return "";
}

// Removes the keyword at pointer from schema, or, when the compiler met it in a schema merged
// from allOf branches, from the first branch of the allOf at its parent that has it. Returns
// the pointer of what it removed, or "" when it found nothing to remove.
std::string erase_keyword(SchemaJson& schema, const std::string& pointer) {
  try {
    SchemaJson::json_pointer at(pointer);
    if (std::string erased = erase_at(schema, at); !erased.empty()) return erased;
    if (at.empty()) return "";
    const std::string keyword = at.back();
    const SchemaJson::json_pointer parent = at.parent_pointer();
    if (!schema.contains(parent)) return "";
    const SchemaJson& owner = schema.at(parent);
    if (!owner.is_object() || !owner.contains("allOf") || !owner["allOf"].is_array()) return "";
    for (size_t i = 0; i < owner["allOf"].size(); ++i) {
      const SchemaJson::json_pointer branch_keyword =
          parent / "allOf" / std::to_string(i) / keyword;
      if (std::string erased = erase_at(schema, branch_keyword); !erased.empty()) return erased;
    }
  } catch (const std::exception&) {
    return "";
  }
  return "";
}

// The name of the keyword at a JSON pointer ("/properties/a/uniqueItems" -> "uniqueItems";
// "/allOf/2" -> "allOf").
std::string keyword_at(const std::string& pointer) {
  SchemaJson::json_pointer at;
  try {
    at = SchemaJson::json_pointer(pointer);
  } catch (const std::exception&) {
    return pointer;
  }
  while (!at.empty()) {
    const std::string last = at.back();
    const auto is_index_char = [](char c) { return c >= '0' && c <= '9'; };
    if (last.empty() || !std::all_of(last.begin(), last.end(), is_index_char)) return last;
    at.pop_back();
  }
  return pointer;
}

// What a refusal's message says after its source and pointer.
std::string refusal_reason(const SchemaRefusal& refusal) {
  const std::string message = refusal.what();
  const std::string marker = refusal.keyword_pointer() + ": ";
  size_t at = message.find(marker);
  return at == std::string::npos ? message : message.substr(at + marker.size());
}

}  // namespace

const char* to_string(JsonWhitespace whitespace) {
  return whitespace == JsonWhitespace::Compact ? "compact" : "flexible";
}

const char* to_string(SchemaMode mode) {
  return mode == SchemaMode::BestEffort ? "best-effort" : "strict";
}

JsonWhitespace parse_json_whitespace(const std::string& name) {
  if (name == "flexible") return JsonWhitespace::Flexible;
  if (name == "compact") return JsonWhitespace::Compact;
  fail("unknown JSON whitespace '", name, "' (flexible or compact)");
}

SchemaMode parse_schema_mode(const std::string& name) {
  if (name == "strict") return SchemaMode::Strict;
  if (name == "best-effort") return SchemaMode::BestEffort;
  fail("unknown schema mode '", name, "' (strict or best-effort)");
}

SchemaConverter::SchemaConverter(const SchemaJson& root, const std::string& source_name,
                                 const JsonGrammarOptions& options, JsonSchemaNotes& notes)
    : root_(root),
      source_name_(source_name),
      options_(options),
      notes_(notes),
      dialect_(schema_dialect(root)) {}

std::string SchemaConverter::add_rule(const std::string& body) {
  auto it = rule_by_body_.find(body);
  if (it != rule_by_body_.end()) return it->second;
  std::string name = str_cat("s", rules_.size());
  rules_.emplace_back(name, body);
  rule_by_body_[body] = name;
  return name;
}

const SchemaJson& SchemaConverter::keep(SchemaJson schema) {
  return owned_.emplace_back(std::move(schema));
}

std::string SchemaConverter::text(const std::string& root_expr) const {
  std::string out = whitespace_rule(options_.whitespace);
  out += kJsonPrimitives;
  out += kJsonFormatPrimitives;
  // A leading space: SentencePiece models start their output with "▁{"; JSON allows it.
  out += "root ::= \" \"? " + root_expr + "\n";
  for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
  return out;
}

Grammar SchemaConverter::build(const std::string& root_expr) const {
  std::string generated_name = source_name_ + " (generated grammar)";
  std::vector<GrammarRuleDef> rules = parse_gbnf_rules(text(root_expr), generated_name);
  for (const auto& [name, expr] : pattern_exprs_) rules.push_back({name, expr, 0, 0});
  return Grammar::from_rules(rules, "root", generated_name);
}

SchemaMergeContext SchemaConverter::merge_context() const {
  SchemaMergeContext context;
  context.source_name = source_name_;
  context.dialect = dialect_;
  context.resolve = [this](const std::string& target,
                           const std::string& pointer) -> const SchemaJson& {
    return resolve_ref(target, pointer);
  };
  return context;
}

void SchemaConverter::check_keywords(const SchemaJson& schema, const std::string& pointer) {
  for (const auto& [key, value] : schema.items()) {
    std::string here = pointer + "/" + escape_json_pointer_token(key);
    switch (schema_keyword_kind(key)) {
      case SchemaKeywordKind::Unknown:
        notes_.add(here, key, "unknown keyword");
        break;
      case SchemaKeywordKind::Refused:
        refuse(here, "unsupported keyword '", key,
               "' (it changes which values are valid and cannot be enforced exactly)");
      case SchemaKeywordKind::Enforced:
      case SchemaKeywordKind::Annotation:
        break;
    }
  }
}

bool SchemaConverter::has_validation_siblings(const SchemaJson& schema,
                                              const std::set<std::string>& except) const {
  for (const auto& [key, value] : schema.items()) {
    if (except.count(key) || key == "$defs" || key == "definitions") continue;
    SchemaKeywordKind kind = schema_keyword_kind(key);
    if (kind == SchemaKeywordKind::Enforced || kind == SchemaKeywordKind::Refused) return true;
  }
  return false;
}

std::string SchemaConverter::visit(const SchemaJson& input, const std::string& pointer, int depth) {
  if (depth > kMaxSchemaNesting) error(pointer, "schema nested deeper than ", kMaxSchemaNesting);
  if (input.is_boolean()) {
    if (input.get<bool>()) return "value";
    error(pointer, "the schema 'false' matches nothing");
  }
  if (!input.is_object())
    error(pointer, "a schema must be an object or a boolean, not ", json_type_name(input));
  const SchemaJson* rewritten = &input;
  if (auto spelled = rewrite_schema_dialect(input, pointer, notes_)) rewritten = &keep(*spelled);
  const SchemaJson& schema = *rewritten;
  check_keywords(schema, pointer);
  if (schema.contains("$ref")) {
    if (!has_validation_siblings(schema, {"$ref"})) return visit_ref(schema, pointer, depth);
    if (dialect_ == SchemaDialect::Draft4To7) {
      for (const auto& [key, value] : schema.items()) {
        if (key != "$ref" && has_validation_siblings(SchemaJson::object({{key, value}}), {})) {
          notes_.add(pointer + "/" + escape_json_pointer_token(key), key,
                     "keywords beside '$ref' are ignored before draft 2019-09");
        }
      }
      return visit_ref(schema, pointer, depth);
    }
    return visit(keep(flatten_schema(schema, merge_context(), pointer)), pointer, depth + 1);
  }
  if (schema.contains("allOf")) {
    return visit(keep(flatten_schema(schema, merge_context(), pointer)), pointer, depth + 1);
  }
  if (schema.contains("not")) {
    SchemaJson rest = schema;
    erase_schema_keys(rest, {"not"});
    const SchemaJson& negated = schema["not"];
    std::string here = pointer + "/not";
    if (negated.is_boolean()) {
      if (negated.get<bool>())
        error(here, "'not': true matches nothing (the schema is unsatisfiable)");
    } else if (negated.is_object() && negated.contains("type") &&
               !has_validation_siblings(negated, {"type"})) {
      SchemaJson forbidden_schema = negated;
      std::vector<std::string> forbidden = allowed_types(forbidden_schema, here);
      SchemaJson allowed = SchemaJson::array();
      for (const auto& type : allowed_types(rest, pointer)) {
        bool is_forbidden =
            std::find(forbidden.begin(), forbidden.end(), type) != forbidden.end() ||
            (type == "integer" &&
             std::find(forbidden.begin(), forbidden.end(), "number") != forbidden.end());
        bool is_partly_forbidden = type == "number" && std::find(forbidden.begin(), forbidden.end(),
                                                                 "integer") != forbidden.end();
        if (is_partly_forbidden) {
          refuse(here, "unsupported keyword 'not' (numbers that are not integers cannot be ",
                 "written exactly)");
        }
        if (!is_forbidden) allowed.push_back(type);
      }
      if (allowed.empty()) error(here, "'not' excludes every type (the schema is unsatisfiable)");
      rest["type"] = allowed;
    } else {
      refuse(here, "unsupported keyword 'not' (only 'not' of a type list is enforced)");
    }
    return visit(keep(std::move(rest)), pointer, depth + 1);
  }
  for (const char* keyword : {"dependentSchemas", "dependencies"}) {
    if (schema.contains(keyword)) return visit_dependent_schemas(schema, keyword, pointer, depth);
  }
  for (const char* keyword : {"anyOf", "oneOf"}) {
    if (schema.contains(keyword)) return visit_union(schema, keyword, pointer, depth);
  }
  if (schema.contains("enum") || schema.contains("const"))
    return visit_values(schema, pointer, depth);
  return visit_kinds(schema, pointer, depth);
}

const SchemaJson& SchemaConverter::resolve_ref(const std::string& target,
                                               const std::string& pointer) const {
  if (target.empty() || target[0] != '#') {
    refuse(pointer + "/$ref", "only local references (#...) are supported, not '", target, "'");
  }
  const SchemaJson* resolved = nullptr;
  try {
    SchemaJson::json_pointer json_pointer(target.substr(1));
    if (root_.contains(json_pointer)) resolved = &root_.at(json_pointer);
  } catch (const nlohmann::json::exception&) {
    resolved = nullptr;
  }
  if (resolved == nullptr) error(pointer + "/$ref", "reference '", target, "' does not resolve");
  return *resolved;
}

std::string SchemaConverter::visit_ref(const SchemaJson& schema, const std::string& pointer,
                                       int depth) {
  const SchemaJson& ref = schema["$ref"];
  if (!ref.is_string()) error(pointer + "/$ref", "'$ref' must be a string");
  std::string target = ref.get<std::string>();
  const SchemaJson& resolved = resolve_ref(target, pointer);
  std::string target_pointer = target.substr(1);
  auto known = ref_rules_.find(target_pointer);
  if (known != ref_rules_.end()) return known->second;
  std::string name = str_cat("ref", ref_rules_.size());
  ref_rules_[target_pointer] = name;
  std::string body = visit(resolved, target_pointer, depth + 1);
  rules_.emplace_back(name, body);
  return name;
}

namespace {

// Whether no value is valid for schema, as far as its keywords show: the schema false, or an
// object-only schema that requires a property whose schema is false (what merge_schemas writes
// for two branches whose discriminating property differs).
bool is_provably_empty(const SchemaJson& schema) {
  if (schema.is_boolean()) return !schema.get<bool>();
  if (!schema.is_object() || !schema.contains("type")) return false;
  const SchemaJson& type = schema["type"];
  bool is_object_only = type == "object" || type == SchemaJson::array({"object"});
  if (!is_object_only || !schema.contains("required") || !schema.contains("properties"))
    return false;
  const SchemaJson& properties = schema["properties"];
  if (!schema["required"].is_array() || !properties.is_object()) return false;
  for (const auto& name : schema["required"]) {
    if (name.is_string() && properties.contains(name.get<std::string>()) &&
        is_provably_empty(properties[name.get<std::string>()]))
      return true;
  }
  return false;
}

}  // namespace

bool SchemaConverter::are_disjoint(const SchemaJson& a, const SchemaJson& b,
                                   const std::string& pointer) const {
  try {
    return is_provably_empty(merge_schemas(a, b, merge_context(), pointer));
  } catch (const Error&) {
    return false;  // a merge that is not exact proves nothing
  }
}

std::optional<SchemaJson> SchemaConverter::without_required_of(const SchemaJson& narrowed,
                                                               const SchemaJson& other,
                                                               const std::string& pointer) const {
  try {
    SchemaJson a = flatten_schema(narrowed, merge_context(), pointer);
    SchemaJson b = flatten_schema(other, merge_context(), pointer);
    if (!b.is_object() || !b.contains("required") || !b["required"].is_array()) return std::nullopt;
    auto requires_name = [](const SchemaJson& s, const SchemaJson& name) {
      return s.is_object() && s.contains("required") && s["required"].is_array() &&
             std::find(s["required"].begin(), s["required"].end(), name) != s["required"].end();
    };
    for (const SchemaJson& name : b["required"]) {
      if (!name.is_string() || requires_name(a, name)) continue;
      SchemaJson absent = SchemaJson::object();
      absent["type"] = "object";
      absent["properties"] = SchemaJson::object();
      absent["properties"][name.get<std::string>()] = false;
      SchemaJson out = merge_schemas(a, absent, merge_context(), pointer);
      if (!is_provably_empty(out) && are_disjoint(out, b, pointer)) return out;
    }
  } catch (const Error&) {
    return std::nullopt;
  }
  return std::nullopt;
}

void SchemaConverter::make_one_of_disjoint(std::vector<SchemaJson>& branches,
                                           const std::string& pointer) {
  // Each branch as written must match no other branch as given: a value it writes then matches
  // exactly one.
  const std::vector<SchemaJson> given = branches;
  for (size_t i = 0; i < branches.size(); ++i) {
    for (size_t j = 0; j < given.size(); ++j) {
      if (j == i || are_disjoint(branches[i], given[j], pointer)) continue;
      // Branches told apart by a property one requires ({"required":["a"]} | {"required":["b"]}):
      // this one is written as an object without it (a narrowing; it only leaves out values, so
      // the branches checked before stay apart).
      if (auto narrowed = without_required_of(branches[i], given[j], pointer)) {
        branches[i] = std::move(*narrowed);
        continue;
      }
      std::string reason = str_cat("branches ", i, " and ", j,
                                   " of 'oneOf' may both match a value, which oneOf forbids");
      if (options_.mode == SchemaMode::Strict) {
        refuse(pointer, "unsupported keyword 'oneOf' (", reason,
               "; --schema-mode best-effort writes it as anyOf)");
      }
      notes_.add_dropped(pointer, "oneOf", reason + ": written as anyOf");
      return;
    }
  }
}

std::string SchemaConverter::visit_union(const SchemaJson& schema, const std::string& keyword,
                                         const std::string& pointer, int depth) {
  const SchemaJson& branches = schema[keyword];
  std::string here = pointer + "/" + keyword;
  if (!branches.is_array() || branches.empty())
    error(here, "'", keyword, "' must be a non-empty array");
  // Keywords beside the union apply to every branch: each branch is merged with them.
  bool has_siblings = has_validation_siblings(schema, {keyword});
  SchemaJson siblings = schema;
  erase_schema_keys(siblings, {keyword});
  // The branches as written (each merged with the siblings), without those no value fits.
  std::vector<SchemaJson> written;
  std::vector<size_t> indices;
  for (size_t i = 0; i < branches.size(); ++i) {
    if (!has_siblings) {
      written.push_back(branches[i]);
    } else {
      SchemaJson merged =
          merge_schemas(siblings, branches[i], merge_context(), str_cat(here, "/", i));
      if (merged.is_boolean() && !merged.get<bool>()) continue;  // no value fits this branch
      written.push_back(std::move(merged));
    }
    indices.push_back(i);
  }
  // oneOf is written as anyOf, which is exact only when no value matches two branches.
  if (keyword == "oneOf") make_one_of_disjoint(written, here);
  std::string body;
  for (size_t k = 0; k < written.size(); ++k) {
    std::string expr =
        visit(keep(std::move(written[k])), str_cat(here, "/", indices[k]), depth + 1);
    body += (body.empty() ? "" : " | ") + expr;
  }
  if (body.empty()) {
    error(here, "no branch of '", keyword,
          "' is compatible with the keywords beside it (the schema is unsatisfiable)");
  }
  return add_rule(body);
}

std::string SchemaConverter::literal_value(const SchemaJson& value) const {
  return gbnf_literal(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
}

SchemaJson SchemaConverter::admitted_values(const SchemaJson& schema, const std::string& pointer,
                                            int depth) {
  std::string here = pointer + (schema.contains("const") ? "/const" : "/enum");
  SchemaJson candidates = SchemaJson::array();
  if (schema.contains("const")) {
    candidates.push_back(schema["const"]);
    if (schema.contains("enum")) {
      const SchemaJson& values = schema["enum"];
      if (!values.is_array() ||
          std::find(values.begin(), values.end(), schema["const"]) == values.end())
        candidates = SchemaJson::array();
    }
  } else {
    candidates = schema["enum"];
    if (!candidates.is_array() || candidates.empty())
      error(here, "'enum' must be a non-empty array");
  }
  SchemaJson rest = schema;
  erase_schema_keys(rest, {"enum"});
  erase_schema_keys(rest, {"const"});
  SchemaJson admitted = SchemaJson::array();
  if (!has_validation_siblings(rest, {})) {
    admitted = candidates;
  } else if (!has_validation_siblings(rest, {"type"})) {
    // Only a type beside the values: checked here, without a grammar.
    std::vector<std::string> types = allowed_types(rest, pointer);
    for (const auto& value : candidates) {
      for (const auto& type : types) {
        if (value_has_type(value, type)) {
          admitted.push_back(value);
          break;
        }
      }
    }
  } else {
    // The values whose JSON text the grammar of the other keywords accepts. That grammar
    // narrows pattern (matched whole) and format (one spelling): a pattern is searched in the
    // value as JSON Schema says, and a format, an annotation by default, is left to the values.
    std::optional<std::string> pattern;
    if (rest.contains("pattern") && rest["pattern"].is_string())
      pattern = rest["pattern"].get<std::string>();
    erase_schema_keys(rest, {"pattern"});
    erase_schema_keys(rest, {"format"});
    SchemaConverter siblings(root_, source_name_, options_, notes_);
    Grammar grammar = siblings.build(siblings.visit(rest, pointer, depth + 1));
    for (const auto& value : candidates) {
      if (pattern && value.is_string() &&
          !pattern_finds(*pattern, value.get<std::string>(), pointer + "/pattern")) {
        continue;
      }
      if (grammar_accepts_text(grammar, canonical_numbers(value).dump())) admitted.push_back(value);
    }
  }
  if (admitted.empty()) {
    error(here, "no value of '", schema.contains("const") ? "const" : "enum",
          "' satisfies the keywords beside it (the schema is unsatisfiable)");
  }
  return admitted;
}

std::string SchemaConverter::visit_values(const SchemaJson& schema, const std::string& pointer,
                                          int depth) {
  SchemaJson values = admitted_values(schema, pointer, depth);
  std::string body;
  for (size_t i = 0; i < values.size(); ++i) body += (i ? " | " : "") + literal_value(values[i]);
  return add_rule(body);
}

std::vector<std::string> SchemaConverter::allowed_types(const SchemaJson& schema,
                                                        const std::string& pointer) {
  std::vector<std::string> types;
  if (!schema.contains("type")) {
    for (const char* kind : kValueKinds) types.push_back(kind);
    return types;
  }
  const SchemaJson& type = schema["type"];
  if (type.is_string()) {
    types.push_back(type.get<std::string>());
  } else if (type.is_array() && !type.empty()) {
    for (const auto& t : type) {
      if (!t.is_string()) error(pointer + "/type", "'type' lists must hold strings");
      types.push_back(t.get<std::string>());
    }
  } else {
    error(pointer + "/type", "'type' must be a string or a non-empty array of strings");
  }
  for (const auto& t : types) {
    if (t != "integer" &&
        std::find(std::begin(kValueKinds), std::end(kValueKinds), t) == std::end(kValueKinds)) {
      error(pointer + "/type", "unknown type '", t, "'");
    }
  }
  // "number" already holds the integers.
  if (std::find(types.begin(), types.end(), "number") != types.end())
    std::erase(types, std::string("integer"));
  return types;
}

std::string SchemaConverter::visit_kinds(const SchemaJson& schema, const std::string& pointer,
                                         int depth) {
  std::vector<std::string> types = allowed_types(schema, pointer);
  std::set<std::string> constrained;
  for (const auto& [key, value] : schema.items()) {
    std::string_view kind = schema_keyword_value_kind(key);
    if (!kind.empty()) constrained.emplace(kind);
  }
  if (!schema.contains("type") && constrained.empty()) return "value";
  std::string body;
  for (const auto& type : types) {
    // Without "type", a kind no keyword constrains is any value of that kind.
    std::string kind = type == "integer" ? "number" : type;
    bool is_free = !schema.contains("type") && !constrained.count(kind);
    std::string expr = is_free ? kind : visit_kind(schema, type, pointer, depth);
    body += (body.empty() ? "" : " | ") + expr;
  }
  return types.size() == 1 ? body : add_rule(body);
}

std::string SchemaConverter::visit_kind(const SchemaJson& schema, const std::string& type,
                                        const std::string& pointer, int depth) {
  if (type == "null") return "null";
  if (type == "boolean") return "boolean";
  if (type == "string") return visit_string(schema, pointer);
  if (type == "integer") return visit_number(schema, pointer, /*is_integer=*/true);
  if (type == "number") return visit_number(schema, pointer, /*is_integer=*/false);
  if (type == "object") return visit_object(schema, pointer, depth);
  if (type == "array") return visit_array(schema, pointer, depth);
  error(pointer + "/type", "unknown type '", type, "'");
}

std::optional<uint32_t> SchemaConverter::count_keyword(const SchemaJson& schema,
                                                       const char* keyword,
                                                       const std::string& pointer) {
  if (!schema.contains(keyword)) return std::nullopt;
  const SchemaJson& value = schema[keyword];
  // 2.0 is an integer too (draft 6 and later).
  bool is_count =
      value.is_number_unsigned() || (value.is_number_float() && value.get<double>() >= 0 &&
                                     std::floor(value.get<double>()) == value.get<double>());
  if (!is_count) error(pointer + "/" + keyword, "'", keyword, "' must be an integer from 0");
  // An upper bound past what a grammar repeats is lowered to it (a narrowing); a lower one
  // cannot be.
  bool is_upper = std::string_view(keyword).starts_with("max");
  if (value.get<double>() > kMaxGrammarRepeat) {
    if (is_upper) return kMaxGrammarRepeat;
    error(pointer + "/" + keyword, "'", keyword, "' must be an integer from 0 to ",
          kMaxGrammarRepeat);
  }
  return static_cast<uint32_t>(value.get<double>());
}

std::string SchemaConverter::repeat_suffix(uint32_t lo, std::optional<uint32_t> hi) {
  if (hi) return str_cat("{", lo, ",", *hi, "}");
  return str_cat("{", lo, ",}");
}

Grammar json_schema_grammar(std::string_view schema_text, const std::string& source_name,
                            const JsonGrammarOptions& options, JsonSchemaNotes* notes) {
  SchemaJson schema = parse_json_text<SchemaJson>(schema_text, source_name);
  JsonSchemaNotes dropped;
  // Best effort: each refused keyword is removed from the schema as written and the schema
  // compiled again, at most once per keyword of the schema.
  for (size_t attempt = 0;; ++attempt) {
    JsonSchemaNotes attempt_notes;
    try {
      SchemaConverter converter(schema, source_name, options, attempt_notes);
      std::string root_expr = converter.visit(schema, "", 0);
      Grammar grammar = converter.build(root_expr);
      attempt_notes.dropped.insert(attempt_notes.dropped.begin(), dropped.dropped.begin(),
                                   dropped.dropped.end());
      grammar.set_notes(attempt_notes.lines());
      if (notes) {
        for (JsonSchemaNote& note : attempt_notes.ignored)
          notes->add(std::move(note.pointer), std::move(note.keyword), std::move(note.reason));
        for (JsonSchemaNote& note : attempt_notes.dropped)
          notes->add_dropped(std::move(note.pointer), std::move(note.keyword),
                             std::move(note.reason));
      }
      return grammar;
    } catch (const SchemaRefusal& refusal) {
      if (options.mode == SchemaMode::Strict || attempt >= kMaxBestEffortDrops) throw;
      const std::string erased =
          refusal.keyword_pointer().empty() ? "" : erase_keyword(schema, refusal.keyword_pointer());
      if (erased.empty()) throw;
      dropped.add_dropped(erased, keyword_at(erased), refusal_reason(refusal));
    }
  }
}

Grammar json_object_grammar(JsonWhitespace whitespace) {
  std::string text = whitespace_rule(whitespace);
  text += kJsonPrimitives;
  text += "root ::= \" \"? object\n";
  return parse_gbnf(text, "json_object");
}

}  // namespace sluice
