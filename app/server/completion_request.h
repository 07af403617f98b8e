// The OpenAI completion and chat-completion request bodies, parsed and checked into what the
// engine runs. Pure functions: every bad value is an ApiError (400) naming its parameter, so
// the HTTP layer only forwards it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <optional>

#include "engine/core/chat_message.h"
#include "engine/grammar/grammar_source.h"
#include "engine/input/prompt_builder.h"
#include "engine/sched/sampling_params.h"

namespace sluice {

// Limits on what one request may ask for.
inline constexpr int kMaxChoices = 128;      // n
inline constexpr size_t kMaxPrompts = 1024;  // prompts in one /v1/completions request
inline constexpr size_t kMaxStopStrings = 16;
inline constexpr int kMaxRequestJsonDepth = 32;  // real requests nest 4 deep

enum class CompletionKind { Text, Chat };

// One prompt of a text completion: text, or token ids given by the client.
struct CompletionPrompt {
  std::string text;
  std::vector<int32_t> token_ids;
  bool is_tokens = false;
};

struct CompletionRequest {
  CompletionKind kind = CompletionKind::Text;
  std::string model;
  std::vector<CompletionPrompt> prompts;  // Text: one or more
  Conversation messages;                  // Chat
  SamplingParams sampling;
  bool has_seed = false;  // false: the server picks a seed per request
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // The structure every output must have: response_format (json_object, json_schema) or vLLM's
  // structured_outputs (json, regex, choice, grammar); grammar_param names the one given, for
  // errors. (sampling.grammar stays null: the requests submitted for this one carry the source.)
  // A JSON grammar carries the request's schema_mode and json_whitespace, or the defaults.
  std::optional<GrammarSource> grammar;
  std::string grammar_param;
  // Chat: what the request asks of a thinking model's reasoning (issue 31). reasoning_effort
  // (OpenAI's "low" | "medium" | "high"; "" when absent); thinking from
  // chat_template_kwargs.enable_thinking (nullopt when absent); chat_template_kwargs (vLLM's)
  // as given, more variables for the chat template.
  std::string reasoning_effort;
  std::optional<bool> thinking;
  nlohmann::ordered_json template_kwargs = nlohmann::ordered_json::object();
};

// Parses a request body: well-formed UTF-8, JSON nested at most kMaxRequestJsonDepth deep,
// an object. Throws ApiError (400) saying where it is not.
nlohmann::json parse_request_body(std::string_view body);

// Checks and converts a completion (kind Text) or chat completion (kind Chat) body. defaults:
// the server's sampling options (max_tokens, temperature, ... when the body omits them).
// Throws ApiError (400) naming the parameter: unknown, of the wrong type, out of range, or
// unsupported (echo, best_of, suffix, logit_bias, tools), or both
// response_format and structured_outputs; reasoning_effort not low, medium or high;
// chat_template_kwargs not an object, or its enable_thinking not a boolean; schema_mode or
// json_whitespace (Sluice's: a JSON grammar's options over json_defaults) not one of their names.
// A grammar is read, not compiled (the engine service does, when the request is submitted).
CompletionRequest parse_completion_request(const nlohmann::json& body, CompletionKind kind,
                                           const SamplingParams& defaults,
                                           const JsonGrammarOptions& json_defaults = {});

// Returns what a chat request asks of its prompt: the server's (or a job's) reasoning controls
// with the request's effort and thinking over them, its template variables, and a constrained
// answer when it has a structured output.
PromptRequestOptions prompt_request_options(const CompletionRequest& request,
                                            const ReasoningControls& defaults);

// Returns the conversation of a "messages" array (string content, or an array of text parts).
// Throws ApiError (400) naming the message at fault (messages[2].content).
Conversation parse_messages(const nlohmann::json& messages);

}  // namespace sluice
