// Strings of a JSON Schema as GBNF: length bounds, pattern, format.
#include <map>
#include <optional>

#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/json_schema_converter.h"
#include "engine/grammar/length_bound.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {

// Dates are years 1000-2999 with days valid for the month (February up to 28); durations are
// RFC 3339's (appendix A); hostnames have at most 4 labels of 1-32 characters (under 253 in
// all) with no "--" as their third and fourth characters (IDNA's A-labels "xn--..." and the
// reserved labels like them, which a hostname may hold only when they decode to valid IDNA
// 2008 text: not checked, so never written); ipv6 is the full eight-group form; uris are
// http(s) URLs with a path.
const char* const kJsonFormatPrimitives = R"(
json-date ::= [1-2] [0-9]{3} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] ) | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) )
json-time ::= ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )
json-hex ::= [0-9a-f]
json-email-atom ::= [a-zA-Z0-9_+-]{1,32}
json-email-label ::= [a-zA-Z0-9] ( [a-zA-Z0-9-]{0,30} [a-zA-Z0-9] )?
json-dur-n ::= [0-9]{1,4}
json-dur-day ::= json-dur-n "D"
json-dur-month ::= json-dur-n "M" json-dur-day?
json-dur-year ::= json-dur-n "Y" json-dur-month?
json-dur-second ::= json-dur-n "S"
json-dur-minute ::= json-dur-n "M" json-dur-second?
json-dur-hour ::= json-dur-n "H" json-dur-minute?
json-dur-time ::= "T" ( json-dur-hour | json-dur-minute | json-dur-second )
json-duration ::= "P" ( ( json-dur-day | json-dur-month | json-dur-year ) json-dur-time? | json-dur-time | json-dur-n "W" )
json-ipv4-octet ::= "25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9] [0-9] | [0-9]
json-ipv4 ::= json-ipv4-octet "." json-ipv4-octet "." json-ipv4-octet "." json-ipv4-octet
json-ipv6 ::= [0-9a-f]{1,4} ( ":" [0-9a-f]{1,4} ){7}
json-host-label ::= [a-z0-9] ( [a-z0-9-]? [a-z0-9] | [a-z0-9-] ( [a-z0-9-] [a-z0-9] | ( [a-z0-9] [a-z0-9-] | "-" [a-z0-9] ) [a-z0-9-]{0,27} [a-z0-9] ) )?
json-hostname ::= json-host-label ( "." json-host-label ){0,3}
json-uri ::= "http" "s"? "://" json-hostname ( "/" [a-zA-Z0-9._~-]{0,32} ){0,8}
)";

namespace {

// The GBNF inside the quotes of each format written exactly (or narrowed, never widened).
const std::map<std::string, std::string>& format_exprs() {
  static const std::map<std::string, std::string> formats = {
      {"date", "json-date"},
      {"time", "json-time"},
      {"date-time", "json-date \"T\" json-time"},
      {"duration", "json-duration"},
      {"uuid",
       "json-hex{8} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{4} \"-\" json-hex{12}"},
      {"email",
       "json-email-atom ( \".\" json-email-atom )* \"@\" json-email-label ( \".\" "
       "json-email-label )+"},
      {"hostname", "json-hostname"},
      {"ipv4", "json-ipv4"},
      {"ipv6", "json-ipv6"},
      {"uri", "json-uri"},
  };
  return formats;
}

// The expression of a format's strings with every rule inlined, or nullptr when it does not
// inline (made once per format).
const GrammarExpr* inlined_format_expr(const std::string& name) {
  static const std::map<std::string, std::optional<GrammarExpr>> inlined = [] {
    std::map<std::string, GrammarExpr> rules;
    for (GrammarRuleDef& rule : parse_gbnf_rules(kJsonFormatPrimitives, "format primitives"))
      rules[rule.name] = std::move(rule.body);
    std::map<std::string, std::optional<GrammarExpr>> out;
    for (const auto& [format, text] : format_exprs()) {
      std::vector<GrammarRuleDef> root = parse_gbnf_rules("root ::= " + text, "format " + format);
      out[format] = inline_rules(root.at(0).body, rules);
    }
    return out;
  }();
  auto it = inlined.find(name);
  return it == inlined.end() || !it->second ? nullptr : &*it->second;
}

}  // namespace

std::string SchemaConverter::visit_string(const SchemaJson& schema, const std::string& pointer) {
  auto min_length = count_keyword(schema, "minLength", pointer);
  auto max_length = count_keyword(schema, "maxLength", pointer);
  if (min_length && max_length && *max_length < *min_length) {
    error(pointer + "/maxLength", "'maxLength' is below 'minLength'");
  }
  bool has_length = min_length || max_length;
  if (schema.contains("format")) {
    const SchemaJson& format = schema["format"];
    if (!format.is_string()) error(pointer + "/format", "'format' must be a string");
    std::string name = format.get<std::string>();
    auto known = format_exprs().find(name);
    if (known == format_exprs().end()) {
      // The specification makes format an annotation unless a validator opts in.
      notes_.add(pointer + "/format", "format", str_cat("format '", name, "' is not checked"));
    } else {
      if (schema.contains("pattern"))
        refuse(pointer + "/format", "'format' with 'pattern' is not supported");
      if (has_length) {
        // The format's strings of an allowed length (its rules inlined into one expression).
        std::optional<GrammarExpr> bounded;
        if (const GrammarExpr* expr = inlined_format_expr(name))
          bounded = bound_length(*expr, min_length.value_or(0), max_length);
        if (!bounded) {
          refuse(pointer + "/format", "no string of format '", name,
                 "' with a length 'minLength'/'maxLength' allow was found");
        }
        return string_expr_rule(std::move(*bounded), pointer + "/format");
      }
      return add_rule("\"\\\"\" " + known->second + " \"\\\"\"");
    }
  }
  if (schema.contains("pattern")) {
    const SchemaJson& pattern = schema["pattern"];
    if (!pattern.is_string()) error(pointer + "/pattern", "'pattern' must be a string");
    return pattern_rule(pattern.get<std::string>(), pointer + "/pattern",
                        {.min = min_length, .max = max_length});
  }
  if (!has_length) return "string";
  return add_rule("\"\\\"\" json-char" + repeat_suffix(min_length.value_or(0), max_length) +
                  " \"\\\"\"");
}

}  // namespace sluice
