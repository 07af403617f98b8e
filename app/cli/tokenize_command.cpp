// sluice tokenize: print the token ids of a text, space-separated. Loads only the tokenizer, so
// it works on vocab-only GGUF files too.
#include <QCommandLineParser>
#include <cstdio>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "engine/core/mapped_file.h"
#include "engine/model/model.h"
#include "engine/tokenizer/tokenizer_loader.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "tokenize";

struct TokenizeArgs {
  std::string model_path;
  std::string tokenizer_path;
  std::string text;
  bool add_bos = true;
  bool show_pieces = false;
};

TokenizeArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription("Print the token ids of a text, space-separated.");
  parser.addHelpOption();
  parser.addOptions({
      {"model", "Model (or vocab-only GGUF) whose tokenizer to use.", "PATH"},
      {"tokenizer", "Tokenizer file, when not beside or inside the model.", "PATH"},
      {"no-bos", "Do not prepend BOS even when the model asks for it."},
      {"text", "The text to tokenize.", "S"},
      {"file", "Tokenize the contents of this file (bytes as they are).", "F"},
      {"pieces", "Also print each token's piece on its own line."},
  });
  parse_command_line(parser, args, "tokenize");
  TokenizeArgs a;
  if (!parser.isSet("model") && !parser.isSet("tokenizer"))
    throw UsageError("--model or --tokenizer is required");
  a.model_path = parser.value("model").toStdString();
  a.tokenizer_path = parser.value("tokenizer").toStdString();
  if (parser.isSet("text") == parser.isSet("file"))
    throw UsageError("give exactly one of --text and --file");
  a.text = parser.isSet("text") ? parser.value("text").toStdString()
                                : read_text_file(parser.value("file").toStdString());
  a.add_bos = !parser.isSet("no-bos");
  a.show_pieces = parser.isSet("pieces");
  return a;
}

}  // namespace

int run_tokenize(const QStringList& args) {
  TokenizeArgs a;
  try {
    a = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice tokenize --help)");
    return 2;
  }
  try {
    const std::string path =
        a.tokenizer_path.empty() ? locate_tokenizer(a.model_path) : a.tokenizer_path;
    const auto tokenizer = load_tokenizer_file(path);
    const EncodeOptions options{.add_bos = a.add_bos && tokenizer->add_bos_default()};
    const std::vector<int32_t> ids = tokenizer->encode(a.text, options);
    std::string line;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (i > 0) line += ' ';
      line += std::to_string(ids[i]);
    }
    std::printf("%s\n", line.c_str());
    if (a.show_pieces) {
      for (const int32_t id : ids) std::printf("%d\t%s\n", id, tokenizer->token_text(id).c_str());
    }
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
