#include "engine/sched/request.h"

#include "engine/grammar/grammar_matcher.h"

namespace sluice {

const char* to_string(RequestState state) {
  switch (state) {
    case RequestState::Waiting:
      return "waiting";
    case RequestState::Running:
      return "running";
    case RequestState::Preempted:
      return "preempted";
    case RequestState::Finished:
      return "finished";
  }
  return "unknown";
}

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::None:
      return "none";
    case FinishReason::Stop:
      return "stop";
    case FinishReason::Length:
      return "length";
    case FinishReason::Abort:
      return "abort";
    case FinishReason::Error:
      return "error";
  }
  return "unknown";
}

std::unique_ptr<Request> make_request(RequestId request_id, std::vector<int32_t> prompt_token_ids,
                                      const SamplingParams& sampling_params, uint64_t sample_key,
                                      uint32_t sample_idx) {
  auto request = std::make_unique<Request>();
  request->request_id = request_id;
  request->num_prompt_tokens = static_cast<int>(prompt_token_ids.size());
  request->token_ids = std::move(prompt_token_ids);
  request->sampling_params = sampling_params;
  request->sample_key = sample_key;
  request->sample_idx = sample_idx;
  return request;
}

std::unique_ptr<Request> make_child_request(const Request& parent, RequestId child_id,
                                            uint32_t sample_idx) {
  auto child = std::make_unique<Request>();
  child->request_id = child_id;
  child->token_ids = parent.token_ids;
  child->num_prompt_tokens = parent.num_prompt_tokens;
  child->sampling_params = parent.sampling_params;
  child->sample_key = parent.sample_key;
  child->sample_idx = sample_idx;
  child->arrival_time = parent.arrival_time;
  child->grammar_deferred = parent.grammar_deferred;
  if (parent.grammar_matcher) {
    child->grammar_matcher = std::make_shared<GrammarMatcher>(*parent.grammar_matcher);
  }
  return child;
}

}  // namespace sluice
