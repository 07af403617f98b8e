// The OpenAI response bodies: a whole completion, one server-sent-event chunk of a stream, the
// usage chunk, the model list. Pure functions of their inputs (id and creation time given), so
// tests can check every field.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "app/server/completion_request.h"
#include "engine/sched/request.h"
#include "engine/sched/token_logprobs.h"

namespace sluice {

// Identifies one response: "cmpl-..." or "chatcmpl-...", its creation time and model name.
struct ResponseHeader {
  CompletionKind kind = CompletionKind::Text;
  std::string id;
  int64_t created = 0;  // seconds since the epoch
  std::string model;
};

struct Choice {
  int index = 0;
  std::string text;  // the answer
  FinishReason finish_reason = FinishReason::None;
  nlohmann::json logprobs;  // null unless asked for (logprobs_json)
  std::string reasoning;    // a thinking model's reasoning (chat only); "" when none
};

// Returns the bytes a token id adds to the text.
using TokenBytesFn = std::function<std::string(int32_t)>;

// Returns the log-probabilities of tokens (ids[i] drawn with logprobs[i]) in OpenAI's shape:
// text completions {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}
// (offsets count the tokens' bytes from first_offset); chat {content: [{token, logprob, bytes,
// top_logprobs: [{token, logprob, bytes}]}]}. -inf becomes -9999.0, as OpenAI reports it.
nlohmann::json logprobs_json(CompletionKind kind, std::span<const int32_t> ids,
                             std::span<const TokenLogprobs> logprobs, const TokenBytesFn& bytes_of,
                             size_t first_offset = 0);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // the reasoning's tokens among them
  int64_t reasoning_tokens = 0;   // completion_tokens_details.reasoning_tokens, written when > 0
};

// Returns OpenAI's finish_reason for the engine's: "stop", "length", "abort" or "error"; null
// while not finished.
nlohmann::json finish_reason_json(FinishReason reason);

// Returns the whole (non-streamed) response: object "text_completion" with choices[].text, or
// "chat.completion" with choices[].message {role: assistant, content}, and a reasoning that is
// not empty as both reasoning_content (llama.cpp, DeepSeek) and reasoning (vLLM) on the message
// (absent without one, so an answer without reasoning is as before); and usage, with
// completion_tokens_details {reasoning_tokens} when there are any.
nlohmann::json completion_json(const ResponseHeader& header, const std::vector<Choice>& choices,
                               const Usage& usage);

// Returns one choice of a whole response, as completion_json writes it.
nlohmann::json choice_json(CompletionKind kind, const Choice& choice);

// Returns a whole response as text pieces, for an answer too large to hold as one JSON value
// (nlohmann::json takes many times the text's size): concatenated, they are
// completion_json(header, choices, usage) (keys in another order). choice_texts: each choice's
// dump_body(choice_json(...)), in order.
std::vector<std::string> completion_pieces(const ResponseHeader& header,
                                           std::vector<std::string> choice_texts,
                                           const Usage& usage);

// Returns one streamed chunk for a choice: new text (a chat chunk's delta carries the role
// with the choice's first chunk) and, for the last chunk, its finish reason; logprobs those of
// the chunk's tokens (logprobs_json) or null. usage is null when stream_options.include_usage
// is set (as OpenAI sends), absent otherwise.
nlohmann::json chunk_json(const ResponseHeader& header, int index, const std::string& text,
                          bool is_first, FinishReason finish_reason, bool include_usage,
                          const nlohmann::json& logprobs = nullptr);

// Returns one streamed chunk of a chat choice's reasoning: a delta of its own, the text as both
// reasoning_content and reasoning (no content), the role with the choice's first chunk.
// Precondition: header.kind is Chat.
nlohmann::json reasoning_chunk_json(const ResponseHeader& header, int index,
                                    const std::string& reasoning, bool is_first, bool include_usage,
                                    const nlohmann::json& logprobs = nullptr);

// Returns the last chunk of a stream with include_usage: no choices, the usage.
nlohmann::json usage_chunk_json(const ResponseHeader& header, const Usage& usage);

// Returns {"object": "list", "data": [{id, object: "model", created, owned_by, max_model_len}]}.
nlohmann::json models_json(const std::string& model, int64_t created, int max_model_len);

// Returns one server-sent event: "data: <json>\n\n" (invalid UTF-8 replaced, never thrown on).
std::string sse_event(const nlohmann::json& value);
// The event that ends every stream.
inline constexpr const char* kSseDone = "data: [DONE]\n\n";

// Dumps a response body (invalid UTF-8 replaced, never thrown on).
std::string dump_body(const nlohmann::json& value);

}  // namespace sluice
