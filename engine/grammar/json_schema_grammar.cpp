#include "engine/grammar/json_schema_grammar.h"

#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {
namespace {

using Json = nlohmann::ordered_json;

// The primitives every JSON grammar shares, as GBNF.
constexpr const char* kJsonPrimitives = R"(
ws ::= ( " " | "\n" [ \t]{0,20} )?
json-hex4 ::= [0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}
json-char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" json-hex4 )
string ::= "\"" json-char* "\""
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,3} )?
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
json-date ::= [1-2] [0-9]{3} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) )
json-time ::= ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )
json-hex ::= [0-9a-f]
json-email-atom ::= [a-zA-Z0-9_+-]{1,32}
json-email-label ::= [a-zA-Z0-9] ( [a-zA-Z0-9-]{0,30} [a-zA-Z0-9] )?
)";

// The keywords that only annotate (ignored for generation).
const std::set<std::string>& annotation_keywords() {
  static const std::set<std::string> keywords = {
      "title",    "description", "default",   "examples",   "$schema",      "$id",
      "$comment", "readOnly",    "writeOnly", "deprecated", "discriminator"};
  return keywords;
}

const std::set<std::string>& supported_keywords() {
  static const std::set<std::string> keywords = {"type",
                                                 "properties",
                                                 "required",
                                                 "additionalProperties",
                                                 "items",
                                                 "prefixItems",
                                                 "enum",
                                                 "const",
                                                 "anyOf",
                                                 "oneOf",
                                                 "allOf",
                                                 "$ref",
                                                 "$defs",
                                                 "definitions",
                                                 "minItems",
                                                 "maxItems",
                                                 "minLength",
                                                 "maxLength",
                                                 "pattern",
                                                 "minimum",
                                                 "maximum",
                                                 "exclusiveMinimum",
                                                 "exclusiveMaximum",
                                                 "format",
                                                 "nullable"};
  return keywords;
}

std::string pointer_token(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

// --- integer ranges as GBNF -------------------------------------------------------------

// Digit strings a <= b of equal length n >= 1: the GBNF matching every n-digit string in [a, b].
std::string digit_range(const std::string& a, const std::string& b) {
  if (a.size() == 1) {
    return a == b ? gbnf_literal(a) : str_cat("[", a, "-", b, "]");
  }
  if (a[0] == b[0]) {
    return str_cat(gbnf_literal(a.substr(0, 1)), " ", digit_range(a.substr(1), b.substr(1)));
  }
  std::string rest_a = a.substr(1), rest_b = b.substr(1);
  std::string nines(rest_a.size(), '9'), zeros(rest_a.size(), '0');
  std::string any_rest = str_cat(" [0-9]{", rest_a.size(), "}");
  // Only the first and last leading digits need a narrower rest; keeps the output O(n^2).
  std::vector<std::string> alternatives;
  char lo_digit = a[0], hi_digit = b[0];
  if (rest_a != zeros) {
    alternatives.push_back(str_cat(gbnf_literal(a.substr(0, 1)), " ", digit_range(rest_a, nines)));
    ++lo_digit;
  }
  if (rest_b != nines) --hi_digit;
  if (lo_digit <= hi_digit)
    alternatives.push_back(str_cat("[", lo_digit, "-", hi_digit, "]", any_rest));
  if (rest_b != nines) {
    alternatives.push_back(str_cat(gbnf_literal(b.substr(0, 1)), " ", digit_range(zeros, rest_b)));
  }
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : " ") + alternatives[i];
  return out + " )";
}

constexpr int kMaxIntegerDigits = 16;

// Every nonnegative integer in [lo, hi] (hi < 0: unbounded, up to kMaxIntegerDigits digits).
std::vector<std::string> nonnegative_range(int64_t lo, int64_t hi) {
  std::vector<std::string> alternatives;
  std::string lo_text = std::to_string(lo);
  size_t max_len = hi < 0 ? kMaxIntegerDigits : std::to_string(hi).size();
  for (size_t len = lo_text.size(); len <= max_len; ++len) {
    std::string lower = len == lo_text.size() ? lo_text : "1" + std::string(len - 1, '0');
    std::string upper = (hi >= 0 && len == max_len) ? std::to_string(hi) : std::string(len, '9');
    alternatives.push_back(digit_range(lower, upper));
  }
  return alternatives;
}

// Every integer in [lo, hi] (nullopt: unbounded), or "" when there is none.
std::string integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alternatives;
  int64_t nonneg_lo = std::max<int64_t>(lo.value_or(0), 0);
  if (!hi || *hi >= nonneg_lo) {
    for (auto& a : nonnegative_range(nonneg_lo, hi ? *hi : -1)) alternatives.push_back(a);
  }
  if (!lo || *lo < 0) {
    int64_t magnitude_lo = std::max<int64_t>(hi ? -*hi : 1, 1);
    int64_t magnitude_hi = lo ? -*lo : -1;
    if (magnitude_hi < 0 || magnitude_hi >= magnitude_lo) {
      std::string negative = "\"-\" (";
      auto parts = nonnegative_range(magnitude_lo, magnitude_hi);
      for (size_t i = 0; i < parts.size(); ++i) negative += (i ? " | " : " ") + parts[i];
      alternatives.push_back(negative + " )");
    }
  }
  if (alternatives.empty()) return "";
  std::string out = "(";
  for (size_t i = 0; i < alternatives.size(); ++i) out += (i ? " | " : " ") + alternatives[i];
  return out + " )";
}

// --- the converter -------------------------------------------------------------------------

class SchemaConverter {
 public:
  SchemaConverter(const Json& root, const std::string& source_name)
      : root_(root), source_name_(source_name) {}

 private:
  template <typename... Args>
  [[noreturn]] void error(const std::string& pointer, Args&&... args) const {
    fail(source_name_, ": ", pointer.empty() ? "/" : pointer, ": ", std::forward<Args>(args)...);
  }

  std::string add_rule(const std::string& body) {
    auto it = rule_by_body_.find(body);
    if (it != rule_by_body_.end()) return it->second;
    std::string name = str_cat("s", rules_.size());
    rules_.emplace_back(name, body);
    rule_by_body_[body] = name;
    return name;
  }

  // Returns a GBNF expression (usually a rule name) for the schema at pointer.
  std::string visit(const Json& schema, const std::string& pointer, int depth) {
    if (depth > kMaxSchemaNesting) error(pointer, "schema nested deeper than ", kMaxSchemaNesting);
    if (schema.is_boolean()) {
      if (schema.get<bool>()) return "value";
      error(pointer, "the schema 'false' matches nothing");
    }
    if (!schema.is_object())
      error(pointer, "a schema must be an object or a boolean, not ", json_type_name(schema));
    for (const auto& [key, value] : schema.items()) {
      if (!supported_keywords().count(key) && !annotation_keywords().count(key)) {
        error(pointer + "/" + pointer_token(key), "unsupported keyword '", key, "'");
      }
    }
    if (schema.contains("$ref")) return visit_ref(schema, pointer, depth);
    for (const char* combinator : {"anyOf", "oneOf", "allOf"}) {
      if (schema.contains(combinator)) return visit_combinator(schema, combinator, pointer, depth);
    }
    std::string expr = visit_typed(schema, pointer, depth);
    if (schema.contains("nullable")) {
      const Json& nullable = schema["nullable"];
      if (!nullable.is_boolean()) error(pointer + "/nullable", "'nullable' must be a boolean");
      if (nullable.get<bool>()) expr = add_rule(expr + " | null");
    }
    return expr;
  }

  void refuse_siblings(const Json& schema, const std::string& keyword, const std::string& pointer) {
    for (const auto& [key, value] : schema.items()) {
      if (key == keyword || annotation_keywords().count(key) || key == "$defs" ||
          key == "definitions") {
        continue;
      }
      error(pointer + "/" + pointer_token(key), "keyword '", key, "' beside '", keyword,
            "' is not supported");
    }
  }

  std::string visit_ref(const Json& schema, const std::string& pointer, int depth) {
    refuse_siblings(schema, "$ref", pointer);
    const Json& ref = schema["$ref"];
    if (!ref.is_string()) error(pointer + "/$ref", "'$ref' must be a string");
    std::string target = ref.get<std::string>();
    if (target.empty() || target[0] != '#') {
      error(pointer + "/$ref", "only local references (#...) are supported, not '", target, "'");
    }
    std::string target_pointer = target.substr(1);
    auto known = ref_rules_.find(target_pointer);
    if (known != ref_rules_.end()) return known->second;
    const Json* resolved = nullptr;
    try {
      Json::json_pointer json_pointer(target_pointer);
      if (root_.contains(json_pointer)) resolved = &root_.at(json_pointer);
    } catch (const nlohmann::json::exception&) {
      resolved = nullptr;
    }
    if (resolved == nullptr) error(pointer + "/$ref", "reference '", target, "' does not resolve");
    std::string name = str_cat("ref", ref_rules_.size());
    ref_rules_[target_pointer] = name;
    std::string body = visit(*resolved, target_pointer, depth + 1);
    rules_.emplace_back(name, body);
    return name;
  }

  std::string visit_combinator(const Json& schema, const std::string& keyword,
                               const std::string& pointer, int depth) {
    refuse_siblings(schema, keyword, pointer);
    const Json& branches = schema[keyword];
    std::string here = pointer + "/" + keyword;
    if (!branches.is_array() || branches.empty())
      error(here, "'", keyword, "' must be a non-empty array");
    if (keyword == "allOf") {
      if (branches.size() != 1) error(here, "'allOf' with more than one schema is not supported");
      return visit(branches[0], here + "/0", depth + 1);
    }
    std::string body;
    for (size_t i = 0; i < branches.size(); ++i) {
      if (i > 0) body += " | ";
      body += visit(branches[i], str_cat(here, "/", i), depth + 1);
    }
    return add_rule(body);
  }

  std::string literal_value(const Json& value) {
    return gbnf_literal(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict));
  }

  std::string visit_typed(const Json& schema, const std::string& pointer, int depth) {
    if (schema.contains("const")) return literal_value(schema["const"]);
    if (schema.contains("enum")) {
      const Json& values = schema["enum"];
      if (!values.is_array() || values.empty())
        error(pointer + "/enum", "'enum' must be a non-empty array");
      std::string body;
      for (size_t i = 0; i < values.size(); ++i)
        body += (i ? " | " : "") + literal_value(values[i]);
      return add_rule(body);
    }
    std::vector<std::string> types;
    if (schema.contains("type")) {
      const Json& type = schema["type"];
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
    } else {
      types = implied_types(schema);
    }
    std::string body;
    for (size_t i = 0; i < types.size(); ++i) {
      if (i > 0) body += " | ";
      body += visit_type(schema, types[i], pointer, depth);
    }
    return types.size() == 1 ? body : add_rule(body);
  }

  static std::vector<std::string> implied_types(const Json& schema) {
    if (schema.contains("properties") || schema.contains("additionalProperties") ||
        schema.contains("required")) {
      return {"object"};
    }
    if (schema.contains("items") || schema.contains("prefixItems")) return {"array"};
    if (schema.contains("pattern") || schema.contains("format") || schema.contains("minLength") ||
        schema.contains("maxLength")) {
      return {"string"};
    }
    if (schema.contains("minimum") || schema.contains("maximum") ||
        schema.contains("exclusiveMinimum") || schema.contains("exclusiveMaximum")) {
      return {"number"};
    }
    return {"any"};
  }

  std::string visit_type(const Json& schema, const std::string& type, const std::string& pointer,
                         int depth) {
    if (type == "any") return "value";
    if (type == "null") return "null";
    if (type == "boolean") return "boolean";
    if (type == "string") return visit_string(schema, pointer);
    if (type == "integer") return visit_number(schema, pointer, /*is_integer=*/true);
    if (type == "number") return visit_number(schema, pointer, /*is_integer=*/false);
    if (type == "object") return visit_object(schema, pointer, depth);
    if (type == "array") return visit_array(schema, pointer, depth);
    error(pointer + "/type", "unknown type '", type, "'");
  }

  std::optional<uint32_t> count_keyword(const Json& schema, const char* keyword,
                                        const std::string& pointer) {
    if (!schema.contains(keyword)) return std::nullopt;
    const Json& value = schema[keyword];
    if (!value.is_number_unsigned() || value.get<uint64_t>() > kMaxGrammarRepeat) {
      error(pointer + "/" + keyword, "'", keyword, "' must be an integer from 0 to ",
            kMaxGrammarRepeat);
    }
    return static_cast<uint32_t>(value.get<uint64_t>());
  }

  static std::string repeat_suffix(uint32_t lo, std::optional<uint32_t> hi) {
    if (hi) return str_cat("{", lo, ",", *hi, "}");
    return str_cat("{", lo, ",}");
  }

  std::string visit_string(const Json& schema, const std::string& pointer) {
    auto min_length = count_keyword(schema, "minLength", pointer);
    auto max_length = count_keyword(schema, "maxLength", pointer);
    if (min_length && max_length && *max_length < *min_length) {
      error(pointer + "/maxLength", "'maxLength' is below 'minLength'");
    }
    bool has_length = min_length || max_length;
    if (schema.contains("format")) {
      const Json& format = schema["format"];
      if (!format.is_string()) error(pointer + "/format", "'format' must be a string");
      if (has_length)
        error(pointer + "/format", "'format' with 'minLength'/'maxLength' is not supported");
      std::string name = format.get<std::string>();
      std::string inner;
      if (name == "date") {
        inner = "json-date";
      } else if (name == "time") {
        inner = "json-time";
      } else if (name == "date-time") {
        inner = "json-date \"T\" json-time";
      } else if (name == "uuid") {
        inner =
            "json-hex{8} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{12}";
      } else if (name == "email") {
        inner =
            "json-email-atom ( \".\" json-email-atom )* \"@\" json-email-label ( \".\" "
            "json-email-label )+";
      } else {
        error(pointer + "/format", "unsupported format '", name, "'");
      }
      return add_rule("\"\\\"\" " + inner + " \"\\\"\"");
    }
    if (schema.contains("pattern")) {
      const Json& pattern = schema["pattern"];
      if (!pattern.is_string()) error(pointer + "/pattern", "'pattern' must be a string");
      if (has_length)
        error(pointer + "/pattern", "'pattern' with 'minLength'/'maxLength' is not supported");
      std::string name = str_cat("pattern", pattern_exprs_.size());
      pattern_exprs_.emplace_back(name,
                                  regex_to_expr(pattern.get<std::string>(),
                                                str_cat(source_name_, ": ", pointer, "/pattern"),
                                                RegexTextMode::JsonString));
      // Each pattern is parsed within the budget of a grammar's text; so are all of them.
      num_pattern_exprs_ += expr_size(pattern_exprs_.back().second);
      if (num_pattern_exprs_ > kMaxGrammarExprs) {
        error(pointer + "/pattern", "the patterns parse into more than ", kMaxGrammarExprs,
              " characters, classes and groups in all (the limit of a grammar's text)");
      }
      return add_rule("\"\\\"\" " + name + " \"\\\"\"");
    }
    if (!has_length) return "string";
    return add_rule("\"\\\"\" json-char" + repeat_suffix(min_length.value_or(0), max_length) +
                    " \"\\\"\"");
  }

  // Reads a bound; in draft 4 exclusiveMinimum/Maximum are booleans that modify minimum/maximum.
  std::optional<double> bound(const Json& schema, const char* keyword, const std::string& pointer) {
    if (!schema.contains(keyword)) return std::nullopt;
    const Json& value = schema[keyword];
    if (value.is_boolean()) return std::nullopt;
    if (!value.is_number()) error(pointer + "/" + keyword, "'", keyword, "' must be a number");
    double d = value.get<double>();
    if (!std::isfinite(d) || std::fabs(d) > 1e15) {
      error(pointer + "/" + keyword, "'", keyword, "' must be within ±1e15");
    }
    return d;
  }

  std::string visit_number(const Json& schema, const std::string& pointer, bool is_integer) {
    auto minimum = bound(schema, "minimum", pointer);
    auto maximum = bound(schema, "maximum", pointer);
    auto exclusive_minimum = bound(schema, "exclusiveMinimum", pointer);
    auto exclusive_maximum = bound(schema, "exclusiveMaximum", pointer);
    bool min_is_exclusive = false, max_is_exclusive = false;
    if (schema.contains("exclusiveMinimum") && schema["exclusiveMinimum"].is_boolean()) {
      min_is_exclusive = schema["exclusiveMinimum"].get<bool>();
    }
    if (schema.contains("exclusiveMaximum") && schema["exclusiveMaximum"].is_boolean()) {
      max_is_exclusive = schema["exclusiveMaximum"].get<bool>();
    }
    // Tightest lower and upper bound, with whether each is exclusive.
    std::optional<double> lo = minimum, hi = maximum;
    bool lo_exclusive = lo && min_is_exclusive, hi_exclusive = hi && max_is_exclusive;
    if (exclusive_minimum && (!lo || *exclusive_minimum >= *lo)) {
      lo = exclusive_minimum;
      lo_exclusive = true;
    }
    if (exclusive_maximum && (!hi || *exclusive_maximum <= *hi)) {
      hi = exclusive_maximum;
      hi_exclusive = true;
    }
    if (!lo && !hi) return is_integer ? "integer" : "number";
    std::optional<int64_t> int_lo, int_hi;
    if (lo) int_lo = static_cast<int64_t>(lo_exclusive ? std::floor(*lo) + 1 : std::ceil(*lo));
    if (hi) int_hi = static_cast<int64_t>(hi_exclusive ? std::ceil(*hi) - 1 : std::floor(*hi));
    std::vector<std::string> alternatives;
    std::string plain = integer_range(int_lo, int_hi);
    if (!plain.empty()) alternatives.push_back(plain);
    if (!is_integer) {
      constexpr const char* kFraction = " \".\" [0-9]{0,14} [1-9]";
      // M.ddd in (M, M + 1) needs lo <= M and M + 1 <= hi.
      std::optional<int64_t> m_lo = static_cast<int64_t>(std::max(lo ? std::ceil(*lo) : 0.0, 0.0));
      std::optional<int64_t> m_hi;
      if (hi) m_hi = static_cast<int64_t>(std::floor(*hi)) - 1;
      if (!m_hi || *m_hi >= *m_lo) {
        std::string positive = integer_range(m_lo, m_hi);
        if (!positive.empty()) alternatives.push_back(positive + kFraction);
      }
      // -M.ddd in (-(M + 1), -M) needs lo <= -(M + 1) and -M <= hi.
      std::optional<int64_t> n_lo = static_cast<int64_t>(std::max(hi ? std::ceil(-*hi) : 0.0, 0.0));
      std::optional<int64_t> n_hi;
      if (lo) n_hi = static_cast<int64_t>(std::floor(-*lo)) - 1;
      if (!n_hi || *n_hi >= *n_lo) {
        std::string negative = integer_range(n_lo, n_hi);
        if (!negative.empty()) alternatives.push_back("\"-\" " + negative + kFraction);
      }
    }
    if (alternatives.empty())
      error(pointer, "no ", is_integer ? "integer" : "number", " lies within the bounds");
    std::string body;
    for (size_t i = 0; i < alternatives.size(); ++i) body += (i ? " | " : "") + alternatives[i];
    return add_rule(body);
  }

  std::string visit_object(const Json& schema, const std::string& pointer, int depth) {
    struct Property {
      std::string key_literal;  // the key as a GBNF literal of its JSON text
      std::string value;        // GBNF expression of its value
      bool is_required;
    };
    std::set<std::string> required;
    if (schema.contains("required")) {
      const Json& list = schema["required"];
      if (!list.is_array()) error(pointer + "/required", "'required' must be an array of strings");
      for (const auto& name : list) {
        if (!name.is_string())
          error(pointer + "/required", "'required' must be an array of strings");
        required.insert(name.get<std::string>());
      }
    }
    std::vector<Property> properties;
    std::vector<std::string> names;
    if (schema.contains("properties")) {
      const Json& props = schema["properties"];
      if (!props.is_object()) error(pointer + "/properties", "'properties' must be an object");
      for (const auto& [name, sub] : props.items()) {
        std::string value = visit(sub, pointer + "/properties/" + pointer_token(name), depth + 1);
        properties.push_back({literal_value(Json(name)), value, required.count(name) != 0});
        names.push_back(name);
      }
    }
    for (const auto& name : required) {
      if (std::find(names.begin(), names.end(), name) == names.end()) {
        properties.push_back({literal_value(Json(name)), "value", true});
        names.push_back(name);
      }
    }
    std::string extra;  // GBNF of one extra "key": value pair, or "" when none are allowed
    if (schema.contains("additionalProperties")) {
      const Json& additional = schema["additionalProperties"];
      if (!(additional.is_boolean() && !additional.get<bool>())) {
        std::string value = visit(additional, pointer + "/additionalProperties", depth + 1);
        extra = add_rule(excluded_key_rule(names) + " ws \":\" ws " + value);
      }
    }
    // first_i: properties i.. with no comma before the first; rest_i: each written with a comma.
    size_t n = properties.size();
    std::string first_next =
        extra.empty() ? "" : add_rule(str_cat("( ", extra, " ws ( \",\" ws ", extra, " ws )* )?"));
    std::string rest_next = extra.empty() ? "" : add_rule(str_cat("( \",\" ws ", extra, " ws )*"));
    for (size_t i = n; i-- > 0;) {
      const Property& p = properties[i];
      std::string kv = str_cat(p.key_literal, " ws \":\" ws ", p.value, " ws");
      std::string rest_body = str_cat("\",\" ws ", kv, " ", rest_next);
      std::string first_body = str_cat(kv, " ", rest_next);
      if (!p.is_required) {
        rest_body = str_cat("( ", rest_body, " ) | ", rest_next.empty() ? "\"\"" : rest_next);
        first_body = str_cat("( ", first_body, " ) | ", first_next.empty() ? "\"\"" : first_next);
      }
      rest_next = add_rule(rest_body);
      first_next = add_rule(first_body);
    }
    return add_rule(str_cat("\"{\" ws ", first_next, " \"}\""));
  }

  // A JSON string key, written without escapes, that is none of names.
  std::string excluded_key_rule(const std::vector<std::string>& names) {
    if (names.empty()) return "string";
    // A trie of the names; at each node: a char leading to a child, any other char then
    // anything, or the end when the node is not a name.
    struct TrieNode {
      std::map<uint32_t, size_t> children;
      bool is_name = false;
    };
    std::vector<TrieNode> trie(1);
    for (const auto& name : names) {
      size_t node = 0;
      for (unsigned char c : name) {  // bytes: a name's UTF-8 is matched as its code units
        auto it = trie[node].children.find(c);
        if (it == trie[node].children.end()) {
          trie.push_back({});
          it = trie[node].children.emplace(c, trie.size() - 1).first;
        }
        node = it->second;
      }
      trie[node].is_name = true;
    }
    bool has_non_ascii = false;
    for (const auto& name : names) {
      for (unsigned char c : name) has_non_ascii |= c >= 0x80;
    }
    const std::string plain_char = "[^\"\\\\\\x00-\\x1F]";
    std::vector<std::string> node_rules(trie.size());
    for (size_t i = trie.size(); i-- > 0;) {
      std::string body;
      std::string excluded = "\"\\\\\\x00-\\x1F";
      for (const auto& [c, child] : trie[i].children) {
        if (!body.empty()) body += " | ";
        body += gbnf_literal(std::string(1, static_cast<char>(c))) + " " + node_rules[child];
        excluded += str_cat("\\x", "0123456789ABCDEF"[c >> 4], "0123456789ABCDEF"[c & 15]);
      }
      if (!body.empty()) body += " | ";
      body += "[^" + excluded + "] " + plain_char + "*";
      if (!trie[i].is_name) body += " | \"\"";
      node_rules[i] = add_rule(body);
    }
    if (has_non_ascii) {
      // Non-ASCII names would need byte-level exclusion; keep extra keys ASCII-only instead.
      return add_rule("\"\\\"\" [a-zA-Z0-9_]{1,32} \"\\\"\"");
    }
    return add_rule("\"\\\"\" " + node_rules[0] + " \"\\\"\"");
  }

  std::string visit_array(const Json& schema, const std::string& pointer, int depth) {
    std::vector<std::string> prefix;
    if (schema.contains("prefixItems")) {
      const Json& items = schema["prefixItems"];
      if (!items.is_array()) error(pointer + "/prefixItems", "'prefixItems' must be an array");
      for (size_t i = 0; i < items.size(); ++i) {
        prefix.push_back(visit(items[i], str_cat(pointer, "/prefixItems/", i), depth + 1));
      }
    }
    std::string item = "value";
    bool items_allowed = true;
    if (schema.contains("items")) {
      const Json& items = schema["items"];
      if (items.is_boolean() && !items.get<bool>()) {
        items_allowed = false;
      } else if (items.is_array()) {
        error(pointer + "/items",
              "'items' as an array (draft 4 tuples) is not supported; use 'prefixItems'");
      } else {
        item = visit(items, pointer + "/items", depth + 1);
      }
    }
    uint32_t lo = count_keyword(schema, "minItems", pointer).value_or(0);
    std::optional<uint32_t> hi = count_keyword(schema, "maxItems", pointer);
    size_t k = prefix.size();
    if (!items_allowed) hi = hi ? std::min<uint32_t>(*hi, k) : static_cast<uint32_t>(k);
    if (hi && *hi < lo) error(pointer, "no array length satisfies minItems, maxItems and items");
    // The tail: items after the prefix, tail_lo to tail_hi of them.
    uint32_t tail_lo = lo > k ? lo - static_cast<uint32_t>(k) : 0;
    std::optional<uint32_t> tail_hi;
    if (hi) tail_hi = *hi > k ? *hi - static_cast<uint32_t>(k) : 0;
    std::string tail;
    if (!tail_hi || *tail_hi > 0) {
      if (k == 0) {
        std::string more =
            str_cat("( \",\" ws ", item, " ws )",
                    repeat_suffix(tail_lo > 0 ? tail_lo - 1 : 0,
                                  tail_hi ? std::optional<uint32_t>(*tail_hi - 1) : std::nullopt));
        tail = str_cat(item, " ws ", more);
        if (tail_lo == 0) tail = str_cat("( ", tail, " )?");
      } else {
        tail = str_cat("( \",\" ws ", item, " ws )", repeat_suffix(tail_lo, tail_hi));
      }
    }
    // Prefix items from last to first: each required below minItems, optional (and ending the
    // array) above it.
    std::string body = tail;
    for (size_t i = k; i-- > 0;) {
      if (hi && i >= *hi) continue;
      std::string elem = str_cat(i > 0 ? "\",\" ws " : "", prefix[i], " ws ", body);
      body = i < lo ? elem : str_cat("( ", elem, " )?");
    }
    return add_rule(str_cat("\"[\" ws ", body.empty() ? "" : body, " \"]\""));
  }

  const Json& root_;
  const std::string& source_name_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> rule_by_body_;
  std::map<std::string, std::string> ref_rules_;
  std::vector<std::pair<std::string, GrammarExpr>> pattern_exprs_;
  size_t num_pattern_exprs_ = 0;

  // The expressions in expr, itself included.
  static size_t expr_size(const GrammarExpr& expr) {
    size_t size = 1;
    for (const GrammarExpr& child : expr.children) size += expr_size(child);
    return size;
  }

 public:
  const std::vector<std::pair<std::string, GrammarExpr>>& pattern_exprs() const {
    return pattern_exprs_;
  }
  std::string text(const std::string& root_expr) const {
    std::string out = kJsonPrimitives;
    // A leading space: SentencePiece models start their output with "▁{"; JSON allows it.
    out += "root ::= \" \"? " + root_expr + "\n";
    for (const auto& [name, body] : rules_) out += name + " ::= " + body + "\n";
    return out;
  }
  std::string root_expr() { return visit(root_, "", 0); }
};

}  // namespace

Grammar json_schema_grammar(std::string_view schema_text, const std::string& source_name) {
  Json schema = parse_json_text<Json>(schema_text, source_name);
  SchemaConverter converter(schema, source_name);
  std::string root_expr = converter.root_expr();
  std::string generated_name = source_name + " (generated grammar)";
  std::vector<GrammarRuleDef> rules = parse_gbnf_rules(converter.text(root_expr), generated_name);
  for (const auto& [name, expr] : converter.pattern_exprs()) {
    rules.push_back({name, expr, 0, 0});
  }
  return Grammar::from_rules(rules, "root", generated_name);
}

Grammar json_object_grammar() {
  std::string text = kJsonPrimitives;
  text += "root ::= \" \"? object\n";
  return parse_gbnf(text, "json_object");
}

}  // namespace sluice
