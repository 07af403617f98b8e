// Splits a thinking model's output into its reasoning and its answer (issue 31). Formats:
// - ThinkTags: "<think>reasoning</think>answer" (Qwen3, Qwen3.5, DeepSeek-R1 and its distills,
//   Granite, GLM, ...). The output starts inside the block when the prompt already opened it (the
//   R1 distills' templates end the generation prompt with "<think>\n"): starts_in_reasoning,
//   which prompt_opens_reasoning tells from the rendered prompt.
// - Harmony: gpt-oss's messages "<|channel|>analysis<|message|>...<|end|>" (reasoning) and
//   "<|channel|>final<|message|>...<|return|>" (the answer), "<|start|>assistant" between them;
//   other channels (commentary: preambles and tool calls) count as the answer.
// - ThoughtChannel: Gemma 4's "<|channel>thought\n...<channel|>answer", handled as ThinkTags with
//   its own pair of tags.
// - None: the whole output is the answer.
// Whitespace: a reasoning block is trimmed at both ends, and the answer loses the whitespace
// between a closing tag and its first character. A block that never closes is reasoning to the
// end; an output that opens none is all answer.
//
// ReasoningStream splits output as it arrives: text that may be the start of a tag (a tag split
// across tokens or chunks) and reasoning's trailing whitespace are held until later text decides
// them, so its deltas, concatenated, are split_reasoning of the whole output however it was cut.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

enum class ReasoningFormat : uint8_t { None, ThinkTags, ThoughtChannel, Harmony };

// "none", "think", "thought-channel" or "harmony".
std::string_view reasoning_format_name(ReasoningFormat format);
// The format of a name reasoning_format_name gives; nullopt for any other.
std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name);

// The format a chat template's outputs take: Harmony when the template writes "<|channel|>",
// ThoughtChannel when it writes "<|channel>thought", ThinkTags when it writes "<think>", else None.
ReasoningFormat detect_reasoning_format(std::string_view template_source);

// Whether a prompt rendered with the generation prompt leaves the model inside a reasoning block:
// its last opening tag is not followed by a closing one (Harmony: its last message is an analysis
// message without an end).
bool prompt_opens_reasoning(ReasoningFormat format, std::string_view prompt);

// How the engine treats a request's reasoning (SamplingParams::reasoning).
struct ReasoningParams {
  ReasoningFormat format = ReasoningFormat::None;
  bool starts_in_reasoning = false;  // the prompt left a reasoning block open
  // Reasoning tokens at most: after this many the engine writes the closing text itself and the
  // answer follows. -1: no limit.
  int budget = -1;
};

struct ReasoningSplit {
  std::string reasoning;
  std::string answer;
};

class ReasoningStream {
 public:
  ReasoningStream(ReasoningFormat format, bool starts_in_reasoning);

  // The reasoning and answer text this chunk decides.
  ReasoningSplit feed(std::string_view chunk);
  // The rest, at the end of the output (held text that no tag completed).
  ReasoningSplit finish();

  // Whether the output stands inside a reasoning block (or an analysis message) now.
  bool in_reasoning() const { return state_ == State::Reasoning; }
  // Whether the answer has begun: after a closing tag, or in a message other than analysis.
  bool in_answer() const { return state_ == State::AfterClose || state_ == State::Answer; }

 private:
  enum class State : uint8_t {
    Start,        // a tag pair: before an opening tag or the first answer text
    Reasoning,    // inside a reasoning block (tag pairs) or an analysis message (Harmony)
    AfterClose,   // a tag pair: after the closing tag, dropping whitespace before the answer
    Answer,       // the answer, to the end (tag pairs, None) or to the message's end (Harmony)
    HarmonyHead,  // Harmony: between messages, reading "<|start|>...<|channel|>name<|message|>"
  };

  void feed_tag_pair(ReasoningSplit& out);
  void feed_harmony(ReasoningSplit& out);
  // Appends reasoning text, dropping a block's leading whitespace.
  void emit_reasoning(std::string_view text, ReasoningSplit& out);
  void emit_answer(std::string_view text, ReasoningSplit& out);

  ReasoningFormat format_;
  std::string_view open_, close_;  // the tag pair (ThinkTags, ThoughtChannel)
  State state_;
  std::string pending_;         // text not decided yet
  bool block_started_ = false;  // the current reasoning block has emitted a character
  bool any_reasoning_ = false;  // some reasoning block has emitted a character
  bool any_answer_ = false;     // some answer message has emitted a character (Harmony)
  bool new_message_ = false;    // Harmony: the next character starts another message's text
  // Harmony: the pending text starts with what HarmonyHead refused as a header (its tag is text).
  bool header_refused_ = false;
};

// The whole output at once: one ReasoningStream fed everything.
ReasoningSplit split_reasoning(ReasoningFormat format, bool starts_in_reasoning,
                               std::string_view output);

}  // namespace sluice
