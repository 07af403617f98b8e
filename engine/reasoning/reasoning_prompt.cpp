#include "engine/reasoning/reasoning_prompt.h"

#include <cctype>

#include "engine/core/error.h"

namespace sluice {

namespace {

bool is_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

std::string_view trim_right(std::string_view s) {
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
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

// The text that opens a block, as the model would write it.
std::string_view open_text(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return "<think>\n";
    case ReasoningFormat::ThoughtChannel:
      return "<|channel>thought\n";
    case ReasoningFormat::Harmony:
      return "<|channel|>analysis<|message|>";
    case ReasoningFormat::None:
      break;
  }
  return "";
}

// The text that closes a block the prompt opened, when thinking is off (Qwen3.5's own form).
std::string_view prompt_close_text(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return "\n</think>\n\n";
    case ReasoningFormat::ThoughtChannel:
      return "<channel|>";
    case ReasoningFormat::Harmony:
      return "<|end|><|start|>assistant<|channel|>final<|message|>";
    case ReasoningFormat::None:
      break;
  }
  return "";
}

// An empty block, when thinking is off and the model would open one itself (Qwen3's own form).
std::string_view empty_block_text(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return "<think>\n\n</think>\n\n";
    case ReasoningFormat::ThoughtChannel:
      return "<|channel>thought\n<channel|>";
    case ReasoningFormat::Harmony:
      return "<|channel|>final<|message|>";
    case ReasoningFormat::None:
      break;
  }
  return "";
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
  const std::string_view trimmed = trim_right(prompt);
  if (!trimmed.ends_with(close_tag)) return false;
  const size_t open = trimmed.rfind(open_tag);
  if (open == std::string_view::npos) return false;
  const size_t inner = open + open_tag.size();
  if (!trim_right(trimmed.substr(inner, trimmed.size() - close_tag.size() - inner)).empty())
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
  const std::string_view trimmed = trim_right(prompt);
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
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return "\n</think>\n\n";
    case ReasoningFormat::ThoughtChannel:
      return "\n<channel|>";
    case ReasoningFormat::Harmony:
      return "<|end|><|start|>assistant<|channel|>final<|message|>";
    case ReasoningFormat::None:
      break;
  }
  return "";
}

std::string_view reasoning_answer_separator(ReasoningFormat format) {
  return format == ReasoningFormat::ThinkTags ? "\n\n" : "";
}

ReasoningParams apply_reasoning_controls(ReasoningFormat format, const ReasoningControls& controls,
                                         bool has_grammar, std::string& prompt) {
  validate_reasoning_controls(controls);
  ReasoningStart start = reasoning_start(format, prompt);
  // A budget of 0 is thinking off: no reasoning token at all.
  const bool off = controls.thinking == false || controls.budget == 0;
  if (format != ReasoningFormat::None) {
    if (off) {
      if (start == ReasoningStart::Open) prompt += prompt_close_text(format);
      if (start == ReasoningStart::ModelOpens) prompt += empty_block_text(format);
      start = ReasoningStart::Closed;
    } else if (controls.thinking == true && start == ReasoningStart::Closed &&
               reopen_empty_block(format, prompt)) {
      start = reasoning_start(format, prompt);
    }
    // A constrained answer: the model reasons freely first, in the block opened for it.
    if (has_grammar && start == ReasoningStart::ModelOpens) {
      prompt += open_text(format);
      start = ReasoningStart::Open;
    }
  }
  return ReasoningParams{.format = format,
                         .starts_in_reasoning = start == ReasoningStart::Open,
                         .budget = off ? -1 : controls.budget};
}

}  // namespace sluice
