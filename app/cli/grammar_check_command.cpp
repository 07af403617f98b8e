// sluice grammar check: compile a grammar source as a job would (what it enforces, ignores,
// drops, or why it is refused) and check texts through the token-level matcher the sampler uses
// with a model's vocabulary (byte by byte without one), beside the schema's full validator.
#include <QCommandLineParser>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "app/cli/grammar_options.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/grammar/grammar_check.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer_loader.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "grammar check";

constexpr const char* kEpilogue =
    "\nGive one grammar (--schema, --json-object, --regex, --choice or --gbnf) and any number of\n"
    "texts. Each text is spelled in the model's tokens (its tokenizer's encoding when that spells\n"
    "it exactly) and checked as the sampler checks output: every token in the next-token mask and\n"
    "accepted, then the grammar complete and a stop token allowed. A schema's texts are also\n"
    "judged by the full JSON Schema validator: 'schema: valid (a narrowing)' marks a valid text\n"
    "the grammar never writes (see the narrowings of JSON Schema grammars in the docs).\n"
    "--jsonl: each line is one text as written; with --field NAME each line is an object and its\n"
    "field is the text (a string's contents, any other value as compact JSON).\n"
    "\nExit status: 0 the grammar compiled and every text was accepted; 1 some text was refused;\n"
    "2 a usage error or unreadable input (a file, a JSONL line, the tokenizer); 3 the grammar was\n"
    "refused or did not compile.\n";

struct CheckText {
  std::string label;  // "--text 2", "out.jsonl:7", a file path
  std::string text;
};

struct GrammarCheckArgs {
  GrammarSource source;
  std::string model_path;
  std::string tokenizer_path;
  std::vector<CheckText> texts;  // --text ones, then (read_texts) the files' and JSONL's
  std::vector<std::string> file_paths;
  std::string jsonl_path;
  std::string jsonl_field;
  bool is_json = false;
};

GrammarSource read_source(const QCommandLineParser& parser) {
  std::optional<GrammarSource> given = read_grammar_source_options(parser);
  if (!given)
    throw UsageError("give a grammar: --schema, --json-object, --regex, --choice or --gbnf");
  GrammarSource source = std::move(*given);
  if (parser.isSet("json-whitespace"))
    source.whitespace = parse_json_whitespace(parser.value("json-whitespace").toStdString());
  if (parser.isSet("schema-mode"))
    source.schema_mode = parse_schema_mode(parser.value("schema-mode").toStdString());
  return source;
}

// The texts of a JSONL file: each line as written, or its field (see kEpilogue).
void read_jsonl_texts(const std::string& path, const std::string& field,
                      std::vector<CheckText>& texts) {
  const std::string contents = read_text_file(path);
  size_t line_number = 0;
  for (size_t begin = 0; begin < contents.size();) {
    size_t end = contents.find('\n', begin);
    if (end == std::string::npos) end = contents.size();
    std::string line = contents.substr(begin, end - begin);
    begin = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string label = str_cat(path, ":", line_number);
    nlohmann::json value;
    if (const auto failure = try_parse_json(line, value))
      fail(label, ": ", describe_json_failure(line, *failure));
    if (field.empty()) {
      texts.push_back({label, line});
      continue;
    }
    if (!value.is_object() || !value.contains(field))
      fail(label, ": no field '", field, "' (the line is ", json_type_name(value), ")");
    const nlohmann::json& text = value.at(field);
    texts.push_back({label, text.is_string() ? text.get<std::string>() : text.dump()});
  }
}

GrammarCheckArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Compile a grammar and check texts through the token-level matcher the sampler uses.");
  parser.addHelpOption();
  parser.addOptions({
      {{"schema", "json-schema"}, "The JSON Schema in FILE.", "FILE"},
      {"json-object", "Any JSON object."},
      {"regex", "The regular expression RE, matched as a whole.", "RE"},
      {"choice", "One of the texts given (repeat the option for each).", "TEXT"},
      {{"gbnf", "grammar"}, "The GBNF grammar in FILE (root rule `root`).", "FILE"},
      {"json-whitespace", "Whitespace between JSON tokens: flexible (default) or compact.", "WS"},
      {"schema-mode",
       "A keyword the grammar cannot enforce: strict (default; the schema is refused) or "
       "best-effort (dropped, with a note).",
       "MODE"},
      {"model", "Check texts in this model's (or vocab-only GGUF's) tokens.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"text", "A text to check (repeat for more).", "S"},
      {"file", "A file whose whole contents are one text (repeat for more).", "F"},
      {"jsonl", "A JSONL file: one text per line (see below).", "F"},
      {"field", "With --jsonl: the field of each line's object that holds the text.", "NAME"},
      {"json", "Print one JSON object per line: the grammar's report, then one per text."},
  });
  parse_command_line(parser, args, kCommand, kEpilogue);
  GrammarCheckArgs a;
  try {
    a.source = read_source(parser);
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  a.model_path = parser.value("model").toStdString();
  a.tokenizer_path = parser.value("tokenizer").toStdString();
  a.is_json = parser.isSet("json");
  if (parser.isSet("field") && !parser.isSet("jsonl"))
    throw UsageError("--field goes with --jsonl");
  int text_idx = 0;
  for (const QString& text : parser.values("text"))
    a.texts.push_back({str_cat("--text ", ++text_idx), text.toStdString()});
  for (const QString& file : parser.values("file")) a.file_paths.push_back(file.toStdString());
  a.jsonl_path = parser.value("jsonl").toStdString();
  a.jsonl_field = parser.value("field").toStdString();
  return a;
}

// Reads the texts of the files parse_args named (Error naming the file or line).
void read_texts(GrammarCheckArgs& a) {
  for (const std::string& path : a.file_paths) a.texts.push_back({path, read_text_file(path)});
  if (!a.jsonl_path.empty()) read_jsonl_texts(a.jsonl_path, a.jsonl_field, a.texts);
}

// Prints value on one line; bytes that are not UTF-8 (a text's, a file name's) become U+FFFD.
void print_json_line(const nlohmann::ordered_json& value) {
  const std::string line =
      value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::printf("%s\n", line.c_str());
}

nlohmann::ordered_json notes_json(const std::vector<JsonSchemaNote>& notes) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const JsonSchemaNote& note : notes)
    out.push_back({{"pointer", note.pointer}, {"keyword", note.keyword}, {"reason", note.reason}});
  return out;
}

void print_report(const GrammarCompileReport& report, bool is_json) {
  if (is_json) {
    nlohmann::ordered_json out = {{"kind", "grammar"}, {"compiled", report.is_compiled()}};
    if (!report.is_compiled()) out["error"] = report.error;
    if (report.is_refused()) out["refused_pointer"] = report.refused_pointer;
    if (report.is_compiled()) out["summary"] = report.summary;
    nlohmann::ordered_json enforced = nlohmann::ordered_json::array();
    for (const EnforcedKeywords& e : report.enforced)
      enforced.push_back({{"pointer", e.pointer}, {"keywords", e.keywords}});
    out["enforced"] = enforced;
    out["ignored"] = notes_json(report.ignored);
    out["dropped"] = notes_json(report.dropped);
    print_json_line(out);
    return;
  }
  if (report.is_refused()) {
    std::printf("refused %s: %s\n", report.refused_pointer.c_str(), report.error.c_str());
  } else if (!report.is_compiled()) {
    std::printf("error: %s\n", report.error.c_str());
  } else {
    std::printf("grammar: %s\n", report.summary.c_str());
  }
  for (const EnforcedKeywords& e : report.enforced) {
    std::string keywords;
    for (const std::string& k : e.keywords) keywords += (keywords.empty() ? "" : ", ") + k;
    std::printf("enforced %s: %s\n", e.pointer.empty() ? "/" : e.pointer.c_str(), keywords.c_str());
  }
  for (const JsonSchemaNote& note : report.ignored)
    std::printf("ignored %s: %s\n", note.pointer.c_str(), note.reason.c_str());
  for (const JsonSchemaNote& note : report.dropped)
    std::printf("dropped %s: %s (outputs are validated after)\n", note.pointer.c_str(),
                note.reason.c_str());
}

void print_verdict(const CheckText& text, const TextVerdict& verdict, bool is_json) {
  if (!is_json) {
    std::string line = text.label + ": " + describe_text_verdict(verdict);
    if (!verdict.spelling_note.empty()) line += " [" + verdict.spelling_note + "]";
    std::printf("%s\n", line.c_str());
    return;
  }
  nlohmann::ordered_json out = {{"kind", "text"},
                                {"text", text.label},
                                {"accepted", verdict.is_accepted},
                                {"num_tokens", verdict.num_tokens}};
  if (!verdict.is_accepted) {
    out["token_idx"] = verdict.token_idx;
    out["byte_offset"] = verdict.byte_offset;
    out["reason"] = verdict.reason;
    out["mask_mismatch"] = verdict.is_mask_mismatch;
  }
  if (verdict.by_source) {
    out["schema_valid"] = verdict.by_source->is_valid;
    if (!verdict.by_source->is_valid) out["schema_reason"] = verdict.by_source->reason;
  }
  if (!verdict.spelling_note.empty()) out["spelling_note"] = verdict.spelling_note;
  print_json_line(out);
}

}  // namespace

int run_grammar_check(const QStringList& args) {
  GrammarCheckArgs a;
  try {
    a = parse_args(args);
    read_texts(a);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice grammar check --help)");
    return 2;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 2;
  }
  const GrammarCompileReport report = compile_for_check(a.source);
  print_report(report, a.is_json);
  if (!report.is_compiled()) return 3;
  std::unique_ptr<Tokenizer> tokenizer;
  try {
    if (!a.model_path.empty() || !a.tokenizer_path.empty()) {
      tokenizer = load_tokenizer_file(a.tokenizer_path.empty() ? locate_tokenizer(a.model_path)
                                                               : a.tokenizer_path);
    }
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 2;
  }
  if (a.texts.empty()) return 0;
  if (!a.is_json) {
    std::printf("vocabulary: %s\n",
                tokenizer ? tokenizer->describe().c_str()
                          : "bytes (no --model: checked byte by byte, not in a model's tokens)");
  }
  bool is_all_accepted = true;
  try {
    const GrammarTextCheck check(a.source, report, tokenizer.get());
    for (const CheckText& text : a.texts) {
      const TextVerdict verdict = check.check(text.text);
      print_verdict(text, verdict, a.is_json);
      is_all_accepted = is_all_accepted && verdict.is_accepted;
    }
  } catch (const Error& e) {  // a grammar the matcher cannot start (past its bounds)
    print_error(kCommand, e.what());
    return 3;
  }
  return is_all_accepted ? 0 : 1;
}

int run_grammar(const QStringList& args) {
  const QString subcommand = args.isEmpty() ? QString() : args.front();
  if (subcommand == "check") return run_grammar_check(args.mid(1));
  const bool is_help = subcommand == "--help" || subcommand == "-h";
  std::FILE* out = is_help ? stdout : stderr;
  if (!is_help && !subcommand.isEmpty())
    std::fprintf(stderr, "sluice grammar: unknown subcommand '%s'\n",
                 subcommand.toStdString().c_str());
  std::fprintf(out,
               "Usage: sluice grammar check (--schema FILE | --json-object | --regex RE |\n"
               "                             --choice TEXT... | --gbnf FILE) [texts] [options]\n"
               "  Compile a grammar as a job would (what it enforces, ignores or refuses) and\n"
               "  check texts through the sampler's token-level matcher; see\n"
               "  `sluice grammar check --help`.\n");
  return is_help ? 0 : 2;
}

}  // namespace sluice::cli
