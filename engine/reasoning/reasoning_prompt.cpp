#include "engine/reasoning/reasoning_prompt.h"

#include <cctype>

#include "engine/core/error.h"

namespace sluice {

namespace {

bool is_prompt_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim_prompt_right(std::string_view s) {
  while (!s.empty() && is_prompt_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

// Whether the template reads a variable called name: the word appears outside a longer name, an
// attribute (".name") and a string key ("'name'").
bool reads_variable(std::string_view source, std::string_view name) {
  for (size_t at = source.find(name); at != std::string_view::npos;
       at = source.find(name, at + 1)) {
    const char before = at == 0 ? ' ' : source[at - 1];
    const size_t end = at + name.size();
    const char after = end < source.size() ? source[end] : ' ';
    if (is_name_char(before) || before == '.' || before == '\'' || before == '"') continue;
    if (is_name_char(after) || after == '\'' || after == '"') continue;
    return true;
  }
  return false;
}

// The texts of a format's blocks.
struct FormatTexts {
  std::string_view open;          // opens a block, as the model writes it
  std::string_view prompt_close;  // closes a block the prompt opened (Qwen3.5's form)
  std::string_view empty_block;   // an empty block, where the model would open one (Qwen3's form)
  std::string_view budget_close;  // what the engine writes when a budget is spent
  std::string_view separator;     // after a closing tag the model wrote, before a grammar
};

const FormatTexts& texts_of(ReasoningFormat format) {
  static constexpr FormatTexts kNone{};
  static constexpr FormatTexts kThink{"<think>\n", "\n</think>\n\n", "<think>\n\n</think>\n\n",
                                      "\n</think>\n\n", "\n\n"};
  static constexpr FormatTexts kThought{"<|channel>thought\n", "<channel|>",
                                        "<|channel>thought\n<channel|>", "\n<channel|>", ""};
  // gpt-oss cannot switch reasoning off in its template: the final channel is opened instead.
  static constexpr FormatTexts kHarmony{
      "<|channel|>analysis<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>",
      "<|channel|>final<|message|>", "<|end|><|start|>assistant<|channel|>final<|message|>", ""};
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return kThink;
    case ReasoningFormat::ThoughtChannel:
      return kThought;
    case ReasoningFormat::Harmony:
      return kHarmony;
    case ReasoningFormat::None:
      break;
  }
  return kNone;
}

// Makes a prompt that ends in an empty closed block end inside it instead; false when it does
// not end so.
bool reopen_empty_block(ReasoningFormat format, std::string& prompt) {
  if (format == ReasoningFormat::Harmony) {
    constexpr std::string_view kFinal = "<|channel|>final<|message|>";
    if (!prompt.ends_with(kFinal)) return false;
    prompt.resize(prompt.size() - kFinal.size());
    return true;
  }
  const bool think = format == ReasoningFormat::ThinkTags;
  const std::string_view open_tag = think ? "<think>" : "<|channel>thought";
  const std::string_view close_tag = think ? "</think>" : "<channel|>";
  const std::string_view trimmed = trim_prompt_right(prompt);
  if (!trimmed.ends_with(close_tag)) return false;
  const size_t open = trimmed.rfind(open_tag);
  if (open == std::string_view::npos) return false;
  const size_t inner = open + open_tag.size();
  if (!trim_prompt_right(trimmed.substr(inner, trimmed.size() - close_tag.size() - inner)).empty())
    return false;  // a block with text in it is a past turn's, not the generation prompt's
  prompt.resize(inner);
  prompt += '\n';
  return true;
}

}  // namespace

void validate_reasoning_controls(const ReasoningControls& controls) {
  if (!controls.effort.empty() && controls.effort != "low" && controls.effort != "medium" &&
      controls.effort != "high") {
    fail("reasoning effort must be low, medium or high (got \"", controls.effort, "\")");
  }
  if (controls.budget < -1)
    fail("the reasoning budget must be a number of tokens, 0 or more (got ", controls.budget, ")");
}

void add_reasoning_variables(const ReasoningControls& controls, std::string_view template_source,
                             nlohmann::ordered_json& variables) {
  if (controls.thinking) {
    variables["enable_thinking"] = *controls.thinking;
    if (reads_variable(template_source, "thinking")) variables["thinking"] = *controls.thinking;
  }
  if (!controls.effort.empty()) variables["reasoning_effort"] = controls.effort;
}

ReasoningStart reasoning_start(ReasoningFormat format, std::string_view prompt) {
  if (format == ReasoningFormat::None) return ReasoningStart::Closed;
  if (prompt_opens_reasoning(format, prompt)) return ReasoningStart::Open;
  const std::string_view trimmed = trim_prompt_right(prompt);
  switch (format) {
    case ReasoningFormat::ThinkTags:
      if (trimmed.ends_with("</think>")) return ReasoningStart::Closed;
      break;
    case ReasoningFormat::ThoughtChannel:
      if (trimmed.ends_with("<channel|>")) return ReasoningStart::Closed;
      break;
    case ReasoningFormat::Harmony:
      // A prompt ending in a message header other than analysis's: the answer comes next.
      if (trimmed.ends_with("<|message|>")) return ReasoningStart::Closed;
      break;
    case ReasoningFormat::None:
      break;
  }
  return ReasoningStart::ModelOpens;
}

std::string_view reasoning_close_text(ReasoningFormat format) {
  return texts_of(format).budget_close;
}

std::string_view reasoning_answer_separator(ReasoningFormat format) {
  return texts_of(format).separator;
}

ReasoningParams apply_reasoning_controls(ReasoningFormat format, const ReasoningControls& controls,
                                         bool has_grammar, std::string& prompt) {
  validate_reasoning_controls(controls);
  ReasoningStart start = reasoning_start(format, prompt);
  // A budget of 0 is thinking off: no reasoning token at all.
  const bool off = controls.thinking == false || controls.budget == 0;
  if (format != ReasoningFormat::None) {
    if (off) {
      if (start == ReasoningStart::Open) prompt += texts_of(format).prompt_close;
      if (start == ReasoningStart::ModelOpens) prompt += texts_of(format).empty_block;
      start = ReasoningStart::Closed;
    } else if (controls.thinking == true && start == ReasoningStart::Closed &&
               reopen_empty_block(format, prompt)) {
      start = reasoning_start(format, prompt);
    }
    // A constrained answer: the model reasons freely first, in the block opened for it.
    if (has_grammar && start == ReasoningStart::ModelOpens) {
      prompt += texts_of(format).open;
      start = ReasoningStart::Open;
    }
  }
  return ReasoningParams{.format = format,
                         .starts_in_reasoning = start == ReasoningStart::Open,
                         .budget = off ? -1 : controls.budget};
}

}  // namespace sluice
