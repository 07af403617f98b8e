// Where a request's grammar comes from, as users give it: a JSON Schema, free JSON, a regular
// expression, a choice among strings or a GBNF text. Jobs store the source (not the compiled
// grammar) so a resumed job rebuilds exactly the same grammar.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/grammar/grammar.h"
#include "engine/grammar/json_schema_grammar.h"

namespace sluice {

enum class GrammarSourceKind : uint8_t { JsonSchema, JsonObject, Regex, Choice, Gbnf };

struct GrammarSource {
  GrammarSourceKind kind = GrammarSourceKind::JsonObject;
  std::string name;                  // names the source in errors: a file path or an option
  std::string text;                  // the schema, regex or GBNF text
  std::vector<std::string> choices;  // Choice only
  // JsonSchema and JsonObject only.
  JsonWhitespace whitespace = JsonWhitespace::Flexible;
  SchemaMode schema_mode = SchemaMode::Strict;  // JsonSchema only

  bool operator==(const GrammarSource&) const = default;
};

// Returns "json_schema", "json_object", "regex", "choice" or "gbnf".
const char* to_string(GrammarSourceKind kind);
// Parses the names above; throws sluice::Error for anything else.
GrammarSourceKind parse_grammar_source_kind(const std::string& name);

// Returns what determines source's grammar, as one string: its kind, JSON options, text and
// choices (not its name, so rows that share a schema share a key). Equal keys, equal grammars.
std::string grammar_source_key(const GrammarSource& source);

// Returns source with options applied where they mean something: whitespace to a JsonSchema or
// JsonObject source, the mode to a JsonSchema one (other kinds keep the defaults, so their cache
// key does not change).
GrammarSource with_json_options(GrammarSource source, const JsonGrammarOptions& options);

// Returns the grammar of source. Throws sluice::Error naming source.name and the keyword,
// line and column or character at fault.
Grammar build_grammar(const GrammarSource& source);

}  // namespace sluice
