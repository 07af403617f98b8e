#include "engine/runner/output_processor.h"

#include <algorithm>

#include "engine/core/error.h"

namespace sluice {

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids)
    : tokenizer_(tokenizer), eos_token_ids_(std::move(eos_token_ids)) {}

void OutputProcessor::add(RequestId request_id, const SamplingParams& params,
                          bool at_sequence_start) {
  State s;
  s.detokenizer = std::make_unique<StreamingDetokenizer>(tokenizer_, at_sequence_start);
  if (!params.stop.empty()) s.stop_strings = std::make_unique<StopStringMatcher>(params.stop);
  s.stop_token_ids.insert(params.stop_token_ids.begin(), params.stop_token_ids.end());
  if (!params.ignore_eos) s.stop_token_ids.insert(eos_token_ids_.begin(), eos_token_ids_.end());
  states_[request_id] = std::move(s);
}

OutputProcessor::State& OutputProcessor::state(RequestId request_id) {
  const auto it = states_.find(request_id);
  if (it == states_.end()) fail("output processor: unknown request ", request_id);
  return it->second;
}

size_t OutputProcessor::num_safe_bytes(const State& s) const {
  if (s.is_stopped || !s.stop_strings) return s.text.size();
  return s.text.size() - s.stop_strings->num_held_back(s.text);
}

TokenOutcome OutputProcessor::on_token(RequestId request_id, int32_t token_id) {
  State& s = state(request_id);
  TokenOutcome outcome;
  if (s.stop_token_ids.count(token_id)) {
    s.is_stopped = true;
  } else {
    const size_t old_size = s.text.size();
    s.text += s.detokenizer->push(token_id);
    if (s.stop_strings && s.text.size() > old_size) {
      const size_t match = s.stop_strings->find(s.text, old_size);
      if (match != std::string_view::npos) {
        s.text.resize(match);
        s.is_stopped = true;
      }
    }
  }
  const size_t safe = std::max(num_safe_bytes(s), s.num_emitted);
  outcome.new_text = s.text.substr(s.num_emitted, safe - s.num_emitted);
  s.num_emitted = safe;
  outcome.is_stopped = s.is_stopped;
  return outcome;
}

std::string OutputProcessor::finish(RequestId request_id, std::string* full_text) {
  State& s = state(request_id);
  if (!s.is_stopped) {
    // Flush an incomplete trailing character; it may complete a stop string only if the
    // replacement character is part of one, so check once more.
    const size_t old_size = s.text.size();
    s.text += s.detokenizer->finish();
    if (s.stop_strings && s.text.size() > old_size) {
      const size_t match = s.stop_strings->find(s.text, old_size);
      if (match != std::string_view::npos) s.text.resize(match);
    }
  }
  std::string rest = s.num_emitted < s.text.size() ? s.text.substr(s.num_emitted) : std::string();
  if (full_text) *full_text = std::move(s.text);
  states_.erase(request_id);
  return rest;
}

}  // namespace sluice
