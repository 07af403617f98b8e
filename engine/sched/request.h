// One generation request as the scheduler tracks it: its tokens (prompt, then outputs), how
// many of them have K/V in the cache, its state and, once finished, why.
//
// The prompt and the outputs share one vector because a preempted request is recomputed from
// both alike, and a prefix hit may cover outputs as well as the prompt.
#pragma once

#include "engine/core/request_id.h"
#include "engine/sched/sampling_params.h"
#include "engine/sched/token_logprobs.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace sluice {

class GrammarMatcher;

enum class RequestState {
  Waiting,    // queued, never scheduled
  Running,    // holds blocks; scheduled each step until caught up and sampled
  Preempted,  // blocks taken back; queued to be recomputed from prompt + outputs
  Finished,   // done for the reason in finish_reason
};

enum class FinishReason {
  None,    // not finished
  Stop,    // EOS, a stop token id or a stop string
  Length,  // max_tokens outputs or max_model_len tokens
  Abort,   // cancelled by the user
  Error,   // rejected or failed (the text is in Request::error)
};

// Returns "waiting", "running", "preempted" or "finished".
const char* to_string(RequestState state);
// Returns "none", "stop", "length", "abort" or "error" ("stop" and "length" as in OpenAI's
// finish_reason).
const char* to_string(FinishReason reason);

struct Request {
  using Clock = std::chrono::steady_clock;

  RequestId request_id = 0;
  std::vector<int32_t> token_ids;  // prompt then outputs
  int num_prompt_tokens = 0;
  SamplingParams sampling_params;
  uint64_t sample_key = 0;      // the RNG's request key (for example the input row index)
  uint32_t sample_idx = 0;      // which of the prompt's n samples this is
  int num_computed_tokens = 0;  // leading tokens whose K/V are in the cache
  RequestState state = RequestState::Waiting;
  FinishReason finish_reason = FinishReason::None;
  std::string error;  // why, when finish_reason is Error
  int num_preemptions = 0;
  // Hybrid models: the position (a block boundary) after which the request's state is saved
  // as a prefix checkpoint; its chunks end there. 0: none due.
  int state_checkpoint_at = 0;
  // Where the output stands in sampling_params.grammar (null when unconstrained).
  std::shared_ptr<GrammarMatcher> grammar_matcher;
  // The grammar waits for the reasoning to end (a thinking model's prompt opened a block): no
  // mask, no token accepted by the matcher until the answer begins.
  bool grammar_deferred = false;
  // One per output token when sampling_params.logprobs >= 0 (else empty).
  std::vector<TokenLogprobs> output_logprobs;

  // Filled by the engine; a default (epoch) time point means "not yet".
  Clock::time_point arrival_time{};
  Clock::time_point first_scheduled_time{};
  Clock::time_point first_token_time{};
  Clock::time_point finished_time{};

  int num_tokens() const { return static_cast<int>(token_ids.size()); }
  int num_output_tokens() const { return num_tokens() - num_prompt_tokens; }
  std::span<const int32_t> prompt_token_ids() const {
    return std::span<const int32_t>(token_ids).first(static_cast<size_t>(num_prompt_tokens));
  }
  std::span<const int32_t> output_token_ids() const {
    return std::span<const int32_t>(token_ids).subspan(static_cast<size_t>(num_prompt_tokens));
  }
  bool is_finished() const { return state == RequestState::Finished; }
};

// Returns a waiting request for prompt_token_ids.
std::unique_ptr<Request> make_request(RequestId request_id, std::vector<int32_t> prompt_token_ids,
                                      const SamplingParams& sampling_params, uint64_t sample_key,
                                      uint32_t sample_idx = 0);

// Returns a sibling of parent for Scheduler::fork_request: the same tokens so far, prompt,
// sampling parameters and sample key, a new id and sample index.
std::unique_ptr<Request> make_child_request(const Request& parent, RequestId child_id,
                                            uint32_t sample_idx);

}  // namespace sluice
