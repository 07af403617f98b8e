// sluice render-template: renders a chat template over a conversation and prints the text
// exactly as Hugging Face transformers would build the prompt, to check a model's template (or
// a hand-written one) before a job runs on it.
#include <QCommandLineParser>
#include <cstdio>
#include <ctime>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/cli/cli_command.h"
#include "app/cli/cli_options.h"
#include "engine/core/error.h"
#include "engine/core/json_parse.h"
#include "engine/core/mapped_file.h"
#include "engine/model/model.h"
#include "engine/template/chat_template.h"
#include "engine/tokenizer/tokenizer_loader.h"

namespace sluice::cli {

namespace {

constexpr const char* kCommand = "render-template";

struct RenderTemplateArgs {
  std::string template_path;
  std::string model_path;
  std::string messages_path;
  bool add_generation_prompt = false;
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  std::optional<std::tm> now;  // the time strftime_now() formats; nullopt: the local clock
};

// "2026-01-15T12:00:00", "2026-01-15 12:00:00" or "2026-01-15" (midnight) as a calendar time;
// nullopt for anything else (a trailing character, a 13th month, ...).
std::optional<std::tm> parse_time(const std::string& text) {
  for (const char* format : {"%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"}) {
    std::tm t{};
    const char* end = strptime(text.c_str(), format, &t);
    if (end == nullptr || *end != '\0') continue;
    // strptime leaves the weekday and day of the year to mktime (%a, %j); timegm normalises
    // them without a time zone, and refuses nothing strptime accepted.
    std::tm normalised = t;
    timegm(&normalised);
    if (normalised.tm_mday != t.tm_mday || normalised.tm_mon != t.tm_mon) continue;  // Feb 30
    return normalised;
  }
  return std::nullopt;
}

RenderTemplateArgs parse_args(const QStringList& args) {
  QCommandLineParser parser;
  parser.setApplicationDescription(
      "Render a chat template over a conversation and print the text exactly (no newline "
      "added), as Hugging Face transformers' apply_chat_template builds it.");
  parser.addHelpOption();
  parser.addOptions({
      {"template", "Jinja chat template file.", "FILE"},
      {"model", "Use this model's own chat template (and its BOS/EOS tokens).", "PATH"},
      {"messages",
       "JSON file: an array of {role, content}, or an object with \"messages\" (its other keys, "
       "such as tools, become template variables).",
       "FILE"},
      {"add-generation-prompt", "End with the header of the assistant's turn."},
      {"bos-token", "Text of the BOS token (default: the model's, else undefined).", "S"},
      {"eos-token", "Text of the EOS token (default: the model's, else undefined).", "S"},
      {"now",
       "The time strftime_now() formats, as 2026-01-15T12:00:00 or 2026-01-15 (default: the "
       "local clock), so templates that print the date render reproducibly.",
       "TIME"},
  });
  parse_command_line(parser, args, kCommand);
  if (parser.isSet("template") == parser.isSet("model")) {
    throw UsageError("give exactly one of --template and --model");
  }
  RenderTemplateArgs a;
  a.template_path = parser.value("template").toStdString();
  a.model_path = parser.value("model").toStdString();
  a.messages_path = required_option(parser, "messages").toStdString();
  a.add_generation_prompt = parser.isSet("add-generation-prompt");
  if (parser.isSet("bos-token")) a.bos_token = parser.value("bos-token").toStdString();
  if (parser.isSet("eos-token")) a.eos_token = parser.value("eos-token").toStdString();
  if (parser.isSet("now")) {
    const std::string text = parser.value("now").toStdString();
    a.now = parse_time(text);
    if (!a.now) {
      throw UsageError("--now takes a time as 2026-01-15T12:00:00 or 2026-01-15, not '" + text +
                       "'");
    }
  }
  return a;
}

// Returns the template variables from the --messages file: {"messages": [...]} plus, for the
// object form, its other keys.
nlohmann::ordered_json read_variables(const std::string& path) {
  auto document = parse_json_text<nlohmann::ordered_json>(read_text_file(path), path);
  if (document.is_array()) return {{"messages", std::move(document)}};
  if (!document.is_object() || !document.contains("messages") || !document["messages"].is_array()) {
    fail(path, ": expected an array of messages or an object with a \"messages\" array");
  }
  return document;
}

struct TemplateText {
  std::string source;
  std::string origin;  // named in the template's errors
};

// Reads the model's template and fills in the BOS/EOS texts the user did not give from its
// tokenizer (weights are mapped, not read).
TemplateText read_model_template(RenderTemplateArgs& a) {
  const auto model = load_model(a.model_path, LoadOptions{.prefault = false});
  if (model->chat_template.empty()) fail(a.model_path, ": the model carries no chat template");
  if (!a.bos_token || !a.eos_token) {
    const auto tokenizer = load_tokenizer_file(model->tokenizer_path, model->config.vocab_size);
    if (!a.bos_token && tokenizer->bos_id() >= 0)
      a.bos_token = tokenizer->token_text(tokenizer->bos_id());
    if (!a.eos_token && tokenizer->eos_id() >= 0)
      a.eos_token = tokenizer->token_text(tokenizer->eos_id());
  }
  return {model->chat_template, model->chat_template_origin};
}

std::string render(RenderTemplateArgs& a) {
  const TemplateText text = a.model_path.empty()
                                ? TemplateText{read_text_file(a.template_path), a.template_path}
                                : read_model_template(a);
  nlohmann::ordered_json variables = read_variables(a.messages_path);
  // transformers always passes tools and documents (None when absent).
  if (!variables.contains("tools")) variables["tools"] = nullptr;
  if (!variables.contains("documents")) variables["documents"] = nullptr;
  variables["add_generation_prompt"] = a.add_generation_prompt;
  if (a.bos_token) variables["bos_token"] = *a.bos_token;
  if (a.eos_token) variables["eos_token"] = *a.eos_token;
  return ChatTemplate::compile(text.source, text.origin)
      .render(variables, RenderOptions{.now = a.now});
}

}  // namespace

int run_render_template(const QStringList& args) {
  RenderTemplateArgs a;
  try {
    a = parse_args(args);
  } catch (const UsageError& e) {
    print_error(kCommand, std::string(e.what()) + " (see sluice render-template --help)");
    return 2;
  }
  try {
    const std::string text = render(a);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
  } catch (const std::exception& e) {
    print_error(kCommand, e.what());
    return 1;
  }
}

}  // namespace sluice::cli
