// Per-request output bookkeeping the scheduler does not do: streaming detokenization, stop
// tokens and stop strings. The engine feeds it each sampled token and learns whether the
// request stopped and which text is safe to stream (never half a UTF-8 character, never the
// start of what may become a stop string).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/core/request_id.h"
#include "engine/runner/stop_strings.h"
#include "engine/sched/sampling_params.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/tokenizer.h"

namespace sluice {

struct TokenOutcome {
  bool is_stopped = false;  // EOS, a stop token id or a stop string: finish with Stop
  std::string new_text;     // text that became final with this token (may be empty)
};

class OutputProcessor {
 public:
  // eos_token_ids: ids that end generation unless the request sets ignore_eos.
  OutputProcessor(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids);

  // Starts tracking a request. at_sequence_start: the prompt is empty or BOS alone, so a
  // SentencePiece leading space of the first output is dropped.
  void add(RequestId request_id, const SamplingParams& params, bool at_sequence_start);

  // Accounts for one sampled token of the request.
  TokenOutcome on_token(RequestId request_id, int32_t token_id);

  // Stops tracking the request; returns the rest of its text (held-back bytes flushed, cut at
  // a stop string if one matched) and its whole output text in *full_text.
  std::string finish(RequestId request_id, std::string* full_text);

 private:
  struct State {
    std::unique_ptr<StreamingDetokenizer> detokenizer;
    std::unique_ptr<StopStringMatcher> stop_strings;  // null when the request has none
    std::unordered_set<int32_t> stop_token_ids;
    std::string text;        // decoded so far (cut at a stop string once matched)
    size_t num_emitted = 0;  // bytes of text already returned as new_text
    bool is_stopped = false;
  };

  State& state(RequestId request_id);
  size_t num_safe_bytes(const State& s) const;

  const Tokenizer& tokenizer_;
  std::vector<int32_t> eos_token_ids_;
  std::unordered_map<RequestId, State> states_;
};

}  // namespace sluice
