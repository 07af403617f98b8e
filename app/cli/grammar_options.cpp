#include "app/cli/grammar_options.h"

#include <vector>

#include "app/cli/cli_options.h"
#include "engine/core/error.h"
#include "engine/core/mapped_file.h"

namespace sluice::cli {

std::optional<GrammarSource> read_grammar_source_options(const QCommandLineParser& parser) {
  std::vector<const char*> given;
  for (const char* name : {"json-schema", "json-object", "regex", "choice", "grammar"}) {
    if (parser.isSet(name)) given.push_back(name);
  }
  if (given.empty()) return std::nullopt;
  if (given.size() > 1)
    throw UsageError(str_cat("give one of --", given[0], " and --", given[1], ", not both"));
  GrammarSource source;
  if (parser.isSet("json-schema")) {
    source.kind = GrammarSourceKind::JsonSchema;
    source.name = parser.value("json-schema").toStdString();
    source.text = read_text_file(source.name);
  } else if (parser.isSet("json-object")) {
    source.kind = GrammarSourceKind::JsonObject;
    source.name = "--json-object";
  } else if (parser.isSet("regex")) {
    source.kind = GrammarSourceKind::Regex;
    source.name = "--regex";
    source.text = parser.value("regex").toStdString();
  } else if (parser.isSet("choice")) {
    source.kind = GrammarSourceKind::Choice;
    source.name = "--choice";
    for (const QString& choice : parser.values("choice"))
      source.choices.push_back(choice.toStdString());
  } else {
    source.kind = GrammarSourceKind::Gbnf;
    source.name = parser.value("grammar").toStdString();
    source.text = read_text_file(source.name);
  }
  return source;
}

}  // namespace sluice::cli
