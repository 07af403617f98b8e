// What a job, a batch line or an HTTP request asks of a thinking model's reasoning, turned into
// what the chat template reads and what the engine does (issue 31):
// - reasoning_variables: the template variables of the controls. Thinking on or off sets
//   enable_thinking (Qwen3, Qwen3.5, Gemma 4, DeepSeek-R1 templates that read it) and thinking
//   (templates that read that name); the effort sets reasoning_effort (gpt-oss).
// - apply_reasoning_controls: after the render, the prompt text made to say what the controls
//   asked where the template did not: thinking off closes a block the prompt left open (or
//   writes an empty block, as Qwen3's template does with enable_thinking false); thinking on
//   reopens an empty block the template closed; a constrained answer (a grammar) opens the block
//   the model would have opened, so the reasoning is free and the grammar starts after it.
//   Returns the ReasoningParams the engine runs the request with.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/reasoning/reasoning_parser.h"

namespace sluice {

struct ReasoningControls {
  std::optional<bool> thinking;  // --thinking on|off; nullopt: as the template renders it
  std::string effort;            // --reasoning-effort low|medium|high; "": the template's default
  int budget = -1;               // --reasoning-budget N; -1: no limit
  // --reasoning-format; nullopt: detect_reasoning_format of the chat template.
  std::optional<ReasoningFormat> format;

  bool operator==(const ReasoningControls&) const = default;
};

// Throws Error naming the control when effort is not low, medium or high or budget < -1.
void validate_reasoning_controls(const ReasoningControls& controls);

// Adds the controls' template variables to variables (a JSON object), leaving the others alone.
// template_source decides whether the name `thinking` is set (only when the template reads it).
void add_reasoning_variables(const ReasoningControls& controls, std::string_view template_source,
                             nlohmann::ordered_json& variables);

// Where a rendered prompt leaves the model.
enum class ReasoningStart : uint8_t {
  Closed,      // no reasoning to come: no format, or the prompt closed an (empty) block at its end
  Open,        // inside a reasoning block the prompt opened
  ModelOpens,  // the model may open a block itself (Qwen3, Gemma 4 with thinking, gpt-oss)
};
ReasoningStart reasoning_start(ReasoningFormat format, std::string_view prompt);

// The text the engine writes when a budget ends the reasoning (a closing tag and what the
// template writes between reasoning and answer); "" for None.
std::string_view reasoning_close_text(ReasoningFormat format);
// The text the engine writes after a closing tag the model wrote, before a grammar starts
// ("\n\n" after </think>, as the templates render a past turn); "" when none.
std::string_view reasoning_answer_separator(ReasoningFormat format);

// Adjusts prompt (see the file comment) and returns the engine's parameters. format: the
// controls' format or the template's. has_grammar: the answer is constrained.
ReasoningParams apply_reasoning_controls(ReasoningFormat format, const ReasoningControls& controls,
                                         bool has_grammar, std::string& prompt);

}  // namespace sluice
