#include "engine/grammar/grammar_source.h"

#include "engine/core/error.h"
#include "engine/grammar/choice_grammar.h"
#include "engine/grammar/gbnf_parser.h"
#include "engine/grammar/json_schema_grammar.h"
#include "engine/grammar/regex_grammar.h"

namespace sluice {

const char* to_string(GrammarSourceKind kind) {
  switch (kind) {
    case GrammarSourceKind::JsonSchema:
      return "json_schema";
    case GrammarSourceKind::JsonObject:
      return "json_object";
    case GrammarSourceKind::Regex:
      return "regex";
    case GrammarSourceKind::Choice:
      return "choice";
    case GrammarSourceKind::Gbnf:
      return "gbnf";
  }
  return "unknown";
}

GrammarSourceKind parse_grammar_source_kind(const std::string& name) {
  for (auto kind : {GrammarSourceKind::JsonSchema, GrammarSourceKind::JsonObject,
                    GrammarSourceKind::Regex, GrammarSourceKind::Choice, GrammarSourceKind::Gbnf}) {
    if (name == to_string(kind)) return kind;
  }
  fail("unknown grammar kind '", name, "'");
}

std::string grammar_source_key(const GrammarSource& source) {
  std::string key = to_string(source.kind);
  key += '|';
  key += to_string(source.whitespace);
  key += '|';
  key += to_string(source.schema_mode);
  // Each part length-prefixed: choices may hold any character.
  const auto add = [&](const std::string& part) {
    key += '|';
    key += std::to_string(part.size());
    key += ':';
    key += part;
  };
  add(source.text);
  for (const std::string& choice : source.choices) add(choice);
  return key;
}

GrammarSource with_json_options(GrammarSource source, const JsonGrammarOptions& options) {
  if (source.kind == GrammarSourceKind::JsonSchema || source.kind == GrammarSourceKind::JsonObject)
    source.whitespace = options.whitespace;
  if (source.kind == GrammarSourceKind::JsonSchema) source.schema_mode = options.mode;
  return source;
}

Grammar build_grammar(const GrammarSource& source) {
  switch (source.kind) {
    case GrammarSourceKind::JsonSchema:
      return json_schema_grammar(source.text, source.name,
                                 {.whitespace = source.whitespace, .mode = source.schema_mode});
    case GrammarSourceKind::JsonObject:
      return json_object_grammar(source.whitespace);
    case GrammarSourceKind::Regex:
      return regex_grammar(source.text, source.name);
    case GrammarSourceKind::Choice:
      return choice_grammar(source.choices, source.name);
    case GrammarSourceKind::Gbnf:
      return parse_gbnf(source.text, source.name);
  }
  fail(source.name, ": unknown grammar kind");
}

}  // namespace sluice
