// The OpenAI wire format as a remote job speaks it: the request body for one sample of a row
// (a chat completion with the row's messages, or a text completion with its prompt text), the
// answer parsed back into a FinishedRequest, the error message of a refused request, and the
// Retry-After header. Pure functions, so every malformed answer a server can give is testable.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/engine.h"
#include "engine/grammar/grammar_source.h"
#include "engine/reasoning/reasoning_prompt.h"
#include "engine/service/request_service.h"

namespace sluice {

// Returns the body of one sample's request: model, messages (is_chat) or prompt, max_tokens,
// temperature, top_p, seed, n = 1, stop and penalties when set, vLLM's top_k, min_p,
// repetition_penalty, stop_token_ids and ignore_eos only when they differ from the defaults (a
// strict server refuses names it does not know), and the grammar source (sampling.grammar) as
// response_format (chat, JSON) or structured_outputs: the server compiles it. Throws
// InvalidGrammar when a JSON Schema grammar's text is not JSON. A chat request forwards the
// reasoning controls: reasoning_effort when set, and chat_template_kwargs {enable_thinking} when
// thinking is (vLLM and SGLang read it); a text completion forwards none (no template).
nlohmann::json remote_request_body(const ServiceRequest& request, const std::string& model,
                                   int64_t seed, const ReasoningControls& reasoning = {});

// The path of the request's endpoint below the base URL: "/chat/completions" or "/completions".
const char* remote_request_path(const ServiceRequest& request);

// Parses a 200 answer into one sample: its text, finish reason and token counts (usage); a chat
// answer's reasoning from message.reasoning_content (llama.cpp, DeepSeek, SGLang) or
// message.reasoning (vLLM), the first when both, and its tokens from
// usage.completion_tokens_details.reasoning_tokens (-1 when absent). Throws
// Error saying what is wrong with the body (not JSON, no choices, no text or a null one, which
// OpenAI sends beside tool calls or a refusal, an unknown finish reason).
FinishedRequest parse_remote_response(std::string_view body, bool is_chat);

// Returns the message of an OpenAI-shaped error body ({"error": {"message": ...}}), else the
// body itself cut to 300 bytes and an ellipsis (an HTML page from a proxy, plain text), with
// invalid UTF-8 replaced.
std::string remote_error_message(std::string_view body);

// Parses a Retry-After header: delay seconds (integer or decimal) or an HTTP date
// ("Wed, 21 Oct 2026 07:28:00 GMT", relative to now_utc). nullopt when absent or unreadable;
// never negative.
std::optional<double> parse_retry_after(std::string_view value,
                                        std::chrono::system_clock::time_point now_utc);

}  // namespace sluice
