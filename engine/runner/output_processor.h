// Per-request output bookkeeping the scheduler does not do: streaming detokenization, stop
// tokens and stop strings, and a thinking model's reasoning. The engine feeds it each sampled
// token and learns whether the request stopped and which text is safe to stream (never half a
// UTF-8 character, never the start of what may become a stop string), split into reasoning and
// answer when the request has a reasoning format (SamplingParams::reasoning): the format's tags
// that are special tokens (gpt-oss's <|channel|>, <|message|>, <|end|>, ...) keep their text for
// the split (and <|end|> ends a message, not the output), and the phase — inside the reasoning,
// in the answer, how many reasoning tokens — tells the engine when a budget is spent and when a
// grammar starts.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/core/request_id.h"
#include "engine/reasoning/reasoning_parser.h"
#include "engine/runner/stop_strings.h"
#include "engine/sched/sampling_params.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct TokenOutcome {
  bool is_stopped = false;    // EOS, a stop token id or a stop string: finish with Stop
  std::string new_text;       // answer text that became final with this token (may be empty)
  std::string new_reasoning;  // reasoning text that became final with this token
};

// Where a request's output stands in its reasoning, after the last token.
struct ReasoningPhase {
  bool in_reasoning = false;  // inside a reasoning block (or an analysis message)
  bool in_answer = false;     // the answer has begun (always, without a reasoning format)
  bool answer_began = false;  // the last token began the answer (it closed the reasoning)
  // Tokens that were inside the reasoning before and after they came (the opening and closing
  // tags are not counted).
  int num_reasoning_tokens = 0;
};

// What finish() returns.
struct FinishedOutput {
  std::string answer_rest;     // answer text not returned by on_token yet
  std::string reasoning_rest;  // reasoning text not returned by on_token yet
  std::string answer;          // the whole answer (the whole output without a reasoning format)
  std::string reasoning;       // the whole reasoning
  int num_reasoning_tokens = 0;
};

class OutputProcessor {
 public:
  // eos_token_ids: ids that end generation unless the request sets ignore_eos.
  OutputProcessor(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids);

  // Starts tracking a request. at_sequence_start: the prompt is empty or BOS alone, so a
  // SentencePiece leading space of the first output is dropped.
  void add(RequestId request_id, const SamplingParams& params, bool at_sequence_start);

  // Accounts for one token of the request: sampled, or written by the engine (is_forced: a
  // budget's closing text, never counted as reasoning).
  TokenOutcome on_token(RequestId request_id, int32_t token_id, bool is_forced = false);

  // The request's reasoning phase after its last token.
  const ReasoningPhase& reasoning_phase(RequestId request_id);

  // Stops tracking the request; returns the rest of its text (held-back bytes flushed, cut at
  // a stop string if one matched) and its whole output, split when it has a reasoning format.
  FinishedOutput finish(RequestId request_id);

 private:
  struct State {
    std::unique_ptr<StreamingDetokenizer> detokenizer;
    std::unique_ptr<StopStringMatcher> stop_strings;  // null when the request has none
    std::unordered_set<int32_t> stop_token_ids;
    const std::unordered_set<int32_t>* tag_ids = nullptr;  // special tokens whose text is kept
    std::string text;        // decoded so far (cut at a stop string once matched)
    size_t num_emitted = 0;  // bytes of text already returned
    bool is_stopped = false;
    // With a reasoning format: the phase, fed each token's text as it comes, and the split of
    // the emitted text into reasoning and answer.
    std::optional<ReasoningStream> phase_stream;
    std::optional<ReasoningStream> split_stream;
    ReasoningPhase phase;
    std::string answer;
    std::string reasoning;
  };

  State& state(RequestId request_id);
  size_t num_safe_bytes(const State& s) const;
  // Splits newly emitted text into outcome's reasoning and answer.
  void split_emitted(State& s, std::string_view text, std::string& answer, std::string& reasoning);

  const Tokenizer& tokenizer_;
  std::vector<int32_t> eos_token_ids_;
  // Per reasoning format, its tags that are one special token each.
  std::map<ReasoningFormat, std::unordered_set<int32_t>> tag_ids_;
  std::unordered_map<RequestId, State> states_;
};

}  // namespace sluice
