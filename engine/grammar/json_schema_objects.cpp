// Objects of a JSON Schema as GBNF: named properties in schema order, then extra keys from
// additionalProperties, patternProperties and propertyNames, within the property counts.
#include <algorithm>
#include <map>
#include <optional>

#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/grammar_matcher.h"
#include "engine/grammar/json_schema_converter.h"
#include "engine/grammar/length_bound.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {
namespace {

struct Property {
  std::string name;
  const SchemaJson* schema;  // its value's schema
  bool is_required;
};

// The expressions in expr, itself included.
size_t expr_size(const GrammarExpr& expr) {
  size_t size = 1;
  for (const GrammarExpr& child : expr.children) size += expr_size(child);
  return size;
}

bool is_false_schema(const SchemaJson& schema) {
  return schema.is_boolean() && !schema.get<bool>();
}

}  // namespace

std::string SchemaConverter::pattern_rule(const std::string& pattern, const std::string& pointer,
                                          const StringLengths& lengths) {
  GrammarExpr expr;
  try {
    std::string where = str_cat(source_name_, ": ", pointer);
    if (!lengths.min && !lengths.max) {
      expr = regex_to_expr(pattern, where, RegexTextMode::JsonString);
    } else {
      auto bounded =
          bound_length(regex_to_expr(pattern, where), lengths.min.value_or(0), lengths.max);
      if (!bounded) {
        refuse(pointer, "no string of 'pattern' with a length 'minLength'/'maxLength' allow ",
               "was found");
      }
      expr = json_string_expr(*bounded);
    }
  } catch (const SchemaRefusal&) {
    throw;
  } catch (const Error& e) {
    // A pattern the regex grammar cannot write (lookaround, backreferences, ...) refuses it.
    throw SchemaRefusal(e.what(), pointer);
  }
  return string_expr_rule(std::move(expr), pointer);
}

std::string SchemaConverter::string_expr_rule(GrammarExpr expr, const std::string& pointer) {
  std::string name = str_cat("pattern", pattern_exprs_.size());
  pattern_exprs_.emplace_back(name, std::move(expr));
  // Each pattern is parsed within the budget of a grammar's text; so are all of them.
  num_pattern_exprs_ += expr_size(pattern_exprs_.back().second);
  if (num_pattern_exprs_ > kMaxGrammarExprs) {
    refuse(pointer, "the patterns parse into more than ", kMaxGrammarExprs,
           " characters, classes and groups in all (the limit of a grammar's text)");
  }
  return add_rule("\"\\\"\" " + name + " \"\\\"\"");
}

// Whether pattern matches somewhere in text, as JSON Schema's patterns do (not anchored).
bool SchemaConverter::pattern_finds(const std::string& pattern, const std::string& text,
                                    const std::string& pointer) {
  std::string core = pattern;
  bool is_anchored_start = !core.empty() && core.front() == '^';
  if (is_anchored_start) core.erase(0, 1);
  bool is_anchored_end = false;
  if (!core.empty() && core.back() == '$') {
    size_t num_backslashes = 0;  // an escaped $ is a character, not the end
    for (size_t i = core.size() - 1; i-- > 0 && core[i] == '\\';) ++num_backslashes;
    is_anchored_end = num_backslashes % 2 == 0;
  }
  if (is_anchored_end) core.pop_back();
  std::string search = str_cat(is_anchored_start ? "" : "[\\s\\S]*", "(?:", core, ")",
                               is_anchored_end ? "" : "[\\s\\S]*");
  Grammar grammar = regex_grammar(search, str_cat(source_name_, ": ", pointer));
  return grammar_accepts_text(grammar, text);
}

std::string SchemaConverter::visit_object(const SchemaJson& schema, const std::string& pointer,
                                          int depth) {
  std::vector<std::string> required;
  if (schema.contains("required")) {
    const SchemaJson& list = schema["required"];
    if (!list.is_array()) error(pointer + "/required", "'required' must be an array of strings");
    for (const auto& name : list) {
      if (!name.is_string()) error(pointer + "/required", "'required' must be an array of strings");
      if (std::find(required.begin(), required.end(), name) == required.end())
        required.push_back(name.get<std::string>());
    }
  }
  // dependentRequired: an optional property's dependencies become required (a narrowing).
  if (schema.contains("dependentRequired")) {
    const SchemaJson& dependencies = schema["dependentRequired"];
    if (!dependencies.is_object())
      error(pointer + "/dependentRequired", "'dependentRequired' must be an object");
    for (const auto& [name, list] : dependencies.items()) {
      if (!list.is_array())
        error(pointer + "/dependentRequired", "'dependentRequired' values must be arrays");
      for (const auto& dependency : list) {
        if (!dependency.is_string())
          error(pointer + "/dependentRequired", "'dependentRequired' values must hold strings");
        if (std::find(required.begin(), required.end(), dependency) == required.end())
          required.push_back(dependency.get<std::string>());
      }
    }
  }
  const SchemaJson* patterns = nullptr;
  if (schema.contains("patternProperties")) {
    patterns = &schema["patternProperties"];
    if (!patterns->is_object())
      error(pointer + "/patternProperties", "'patternProperties' must be an object");
  }
  const SchemaJson* names_schema =
      schema.contains("propertyNames") ? &schema["propertyNames"] : nullptr;
  if (names_schema && patterns)
    refuse(pointer + "/propertyNames",
           "'propertyNames' beside 'patternProperties' is not supported");
  bool is_map = !schema.contains("properties") && !patterns;
  SchemaJson additional =
      schema.contains("additionalProperties") ? schema["additionalProperties"] : SchemaJson(is_map);

  // Named properties: declared ones in schema order, then required ones not declared.
  std::vector<Property> properties;
  std::set<std::string> pattern_with_named_match;
  std::optional<Grammar> names_grammar;  // of propertyNames, made when first needed
  auto add_property = [&](const std::string& name, const SchemaJson& sub, const std::string& here) {
    bool is_required = std::find(required.begin(), required.end(), name) != required.end();
    const SchemaJson* value_schema = &sub;
    if (patterns) {
      // A named property is also checked by every pattern that matches its name.
      for (const auto& [pattern, pattern_schema] : patterns->items()) {
        if (!pattern_finds(pattern, name, pointer + "/patternProperties")) continue;
        pattern_with_named_match.insert(pattern);
        value_schema = &keep(merge_schemas(*value_schema, pattern_schema, merge_context(), here));
      }
    }
    if (names_schema) {
      if (!names_grammar) {
        SchemaConverter names(root_, source_name_, options_, notes_);
        names_grammar =
            names.build(names.visit(*names_schema, pointer + "/propertyNames", depth + 1));
      }
      if (!grammar_accepts_text(*names_grammar, SchemaJson(name).dump()))
        value_schema = &keep(false);
    }
    if (is_false_schema(*value_schema)) {
      if (is_required) {
        error(here, "required property '", name,
              "' can never be valid (the schema is unsatisfiable)");
      }
      return;  // an optional property no value fits is left out
    }
    properties.push_back({name, value_schema, is_required});
  };
  if (schema.contains("properties")) {
    const SchemaJson& props = schema["properties"];
    if (!props.is_object()) error(pointer + "/properties", "'properties' must be an object");
    for (const auto& [name, sub] : props.items()) {
      add_property(name, sub, pointer + "/properties/" + escape_json_pointer_token(name));
    }
  }
  for (const auto& name : required) {
    bool is_declared = schema.contains("properties") && schema["properties"].is_object() &&
                       schema["properties"].contains(name);
    if (is_declared) continue;
    // additionalProperties applies to a name no pattern matches (a pattern's schema applies to
    // the others, merged in by add_property). Absent additionalProperties allows any other key:
    // no extra keys are written unprompted, but a required one is.
    bool is_patterned = false;
    if (patterns) {
      for (const auto& [pattern, pattern_schema] : patterns->items())
        is_patterned = is_patterned || pattern_finds(pattern, name, pointer + "/patternProperties");
    }
    SchemaJson undeclared =
        schema.contains("additionalProperties") && !is_patterned ? additional : SchemaJson(true);
    add_property(name, keep(std::move(undeclared)), pointer + "/required");
  }

  // Property counts: the first optional properties become required to reach minProperties;
  // the last ones and the extra keys are left out to stay within maxProperties (narrowings).
  auto min_properties = count_keyword(schema, "minProperties", pointer);
  auto max_properties = count_keyword(schema, "maxProperties", pointer);
  size_t num_required = std::count_if(properties.begin(), properties.end(),
                                      [](const Property& p) { return p.is_required; });
  bool may_have_extras = !is_false_schema(additional) || (patterns && !patterns->empty());
  if (max_properties && num_required > *max_properties) {
    error(pointer + "/maxProperties", "more properties are required than 'maxProperties' allows ",
          "(the schema is unsatisfiable)");
  }
  if (min_properties && *min_properties > num_required && !properties.empty()) {
    size_t missing = *min_properties - num_required;
    for (Property& p : properties) {
      if (missing > 0 && !p.is_required) {
        p.is_required = true;
        --missing;
      }
    }
    if (missing > 0) {
      refuse(pointer + "/minProperties",
             "'minProperties' above the named properties is not supported beside them");
    }
    num_required = *min_properties;
  }
  if (max_properties && !properties.empty() &&
      (properties.size() > *max_properties || may_have_extras)) {
    size_t num_optional_kept = *max_properties - num_required;
    std::erase_if(properties, [&](const Property& p) {
      if (p.is_required) return false;
      if (num_optional_kept == 0) return true;
      --num_optional_kept;
      return false;
    });
    may_have_extras = false;
  }

  std::vector<std::string> names;
  for (const Property& p : properties) names.push_back(p.name);
  // Extra keys: one "key": value pair each, from the patterns or additionalProperties.
  std::vector<std::string> extra_pairs;
  if (may_have_extras && patterns) {
    for (const auto& [pattern, pattern_schema] : patterns->items()) {
      if (pattern_with_named_match.count(pattern)) continue;  // its keys could repeat a name
      // A key may match other patterns too: its value satisfies all of them.
      SchemaJson value_schema = pattern_schema;
      for (const auto& [other, other_schema] : patterns->items()) {
        if (other != pattern)
          value_schema = merge_schemas(value_schema, other_schema, merge_context(), pointer);
      }
      if (is_false_schema(value_schema)) continue;
      std::string here = pointer + "/patternProperties/" + escape_json_pointer_token(pattern);
      std::string key = pattern_rule(pattern, here);
      std::string value = visit(keep(std::move(value_schema)), here, depth + 1);
      extra_pairs.push_back(add_rule(key + " ws \":\" ws " + value));
    }
  } else if (may_have_extras && !is_false_schema(additional)) {
    std::string value = visit(additional, pointer + "/additionalProperties", depth + 1);
    if (names_schema && names.empty()) {
      SchemaJson key_schema =
          merge_schemas(SchemaJson{{"type", "string"}}, *names_schema, merge_context(), pointer);
      if (!is_false_schema(key_schema)) {
        std::string key = visit(keep(std::move(key_schema)), pointer + "/propertyNames", depth + 1);
        extra_pairs.push_back(add_rule(key + " ws \":\" ws " + value));
      }
    } else if (!names_schema) {
      extra_pairs.push_back(add_rule(excluded_key_rule(names) + " ws \":\" ws " + value));
    }
    // propertyNames beside named properties: no extra keys (they could repeat a name).
  }
  std::string extra;
  for (const auto& pair : extra_pairs) extra += (extra.empty() ? "" : " | ") + pair;
  if (!extra.empty()) extra = add_rule(extra);

  if (properties.empty()) {
    // Only extra keys: their count is exact.
    uint32_t lo = min_properties.value_or(0);
    std::optional<uint32_t> hi = max_properties;
    if (extra.empty() || (hi && *hi == 0)) {
      if (lo > 0)
        error(pointer + "/minProperties",
              "no property can be written (the schema is unsatisfiable)");
      return add_rule("\"{\" ws \"}\"");
    }
    // The grammar cannot keep free keys apart: two of them may repeat one key, which a parser
    // reads as one property.
    if (lo >= 2) {
      refuse(pointer + "/minProperties", "'minProperties' of 2 or more with only extra keys is ",
             "not supported (the keys written could repeat)");
    }
    std::string more = str_cat(
        "( \",\" ws ", extra, " ws )",
        repeat_suffix(lo > 0 ? lo - 1 : 0, hi ? std::optional<uint32_t>(*hi - 1) : std::nullopt));
    std::string body = str_cat(extra, " ws ", more);
    if (lo == 0) body = str_cat("( ", body, " )?");
    return add_rule(str_cat("\"{\" ws ", body, " \"}\""));
  }

  // first_i: properties i.. with no comma before the first; rest_i: each written with a comma.
  std::string first_next =
      extra.empty() ? "" : add_rule(str_cat("( ", extra, " ws ( \",\" ws ", extra, " ws )* )?"));
  std::string rest_next = extra.empty() ? "" : add_rule(str_cat("( \",\" ws ", extra, " ws )*"));
  for (size_t i = properties.size(); i-- > 0;) {
    const Property& p = properties[i];
    std::string value =
        visit(*p.schema, pointer + "/properties/" + escape_json_pointer_token(p.name), depth + 1);
    std::string kv =
        str_cat(gbnf_literal(SchemaJson(p.name).dump()), " ws \":\" ws ", value, " ws");
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
std::string SchemaConverter::excluded_key_rule(const std::vector<std::string>& names) {
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
  if (has_non_ascii) {
    // Non-ASCII names would need byte-level exclusion; keep extra keys ASCII-only instead.
    return add_rule("\"\\\"\" [a-zA-Z0-9_]{1,32} \"\\\"\"");
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
  return add_rule("\"\\\"\" " + node_rules[0] + " \"\\\"\"");
}

// dependentSchemas {P: S, ...} (draft-04..07: dependencies with schema values): each P either
// absent, or present with S applying to the whole object. Written as an anyOf of one branch per
// choice (at most 2^kMaxDependentSchemas), each the other keywords merged with the choice; the
// branches never overlap (each names which properties are present).
std::string SchemaConverter::visit_dependent_schemas(const SchemaJson& schema, const char* keyword,
                                                     const std::string& pointer, int depth) {
  const std::string here = pointer + "/" + keyword;
  const SchemaJson& dependencies = schema[keyword];
  if (!dependencies.is_object()) error(here, "'", keyword, "' must be an object");
  SchemaJson rest = schema;
  erase_schema_keys(rest, {keyword});
  std::vector<std::pair<std::string, const SchemaJson*>> active;
  for (const auto& [name, sub] : dependencies.items()) {
    if (!sub.is_boolean() && !sub.is_object())
      error(here + "/" + escape_json_pointer_token(name), "a dependent schema must be an object");
    if ((sub.is_boolean() && sub.get<bool>()) || (sub.is_object() && sub.empty())) continue;
    active.emplace_back(name, &sub);
  }
  if (active.empty()) return visit(keep(std::move(rest)), pointer, depth + 1);
  if (active.size() > kMaxDependentSchemas) {
    refuse(here, "unsupported keyword '", keyword, "' (more than ", kMaxDependentSchemas,
           " dependent schemas)");
  }
  SchemaJson branches = SchemaJson::array();
  for (uint32_t present = 0; present < (1U << active.size()); ++present) {
    SchemaJson branch = rest;
    for (size_t i = 0; i < active.size() && !is_false_schema(branch); ++i) {
      const auto& [name, sub] = active[i];
      const std::string at = here + "/" + escape_json_pointer_token(name);
      SchemaJson choice = SchemaJson::object();
      if (present & (1U << i)) {
        choice["required"] = SchemaJson::array({name});
      } else {
        choice["properties"] = SchemaJson::object();
        choice["properties"][name] = false;
      }
      try {
        branch = merge_schemas(branch, choice, merge_context(), at);
        if (present & (1U << i)) branch = merge_schemas(branch, *sub, merge_context(), at);
      } catch (const SchemaRefusal& refusal) {
        if (!refusal.keyword_pointer().empty()) throw;
        throw SchemaRefusal(refusal.what(), at);  // best effort drops this dependency
      }
    }
    if (!is_false_schema(branch)) branches.push_back(std::move(branch));
  }
  // A branch no object satisfies (a required property its choice left out) is dropped; when
  // every branch is, the first one's error is the schema's.
  std::vector<std::string> exprs;
  std::optional<Error> first_error;
  for (size_t i = 0; i < branches.size(); ++i) {
    try {
      exprs.push_back(visit(keep(std::move(branches[i])), str_cat(here, "/", i), depth + 1));
    } catch (const SchemaRefusal&) {
      throw;
    } catch (const Error& e) {
      if (!first_error) first_error = e;
    }
  }
  if (exprs.empty()) {
    if (first_error) throw *first_error;
    error(here, "no object satisfies '", keyword, "' (the schema is unsatisfiable)");
  }
  std::string body;
  for (const std::string& expr : exprs) body += (body.empty() ? "" : " | ") + expr;
  return exprs.size() == 1 ? exprs[0] : add_rule(body);
}

}  // namespace sluice
