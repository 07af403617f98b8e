#include "engine/runner/output_processor.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "engine/core/error.h"

namespace sluice {

namespace {

// The tags of each reasoning format that may be special tokens of a vocabulary.
std::vector<std::string_view> format_tags(ReasoningFormat format) {
  switch (format) {
    case ReasoningFormat::ThinkTags:
      return {"<think>", "</think>"};
    case ReasoningFormat::ThoughtChannel:
      return {"<|channel>", "<channel|>"};
    case ReasoningFormat::Harmony:
      return {"<|start|>", "<|channel|>", "<|message|>", "<|end|>", "<|constrain|>"};
    case ReasoningFormat::None:
      break;
  }
  return {};
}

}  // namespace

OutputProcessor::OutputProcessor(const Tokenizer& tokenizer, std::vector<int32_t> eos_token_ids)
    : tokenizer_(tokenizer), eos_token_ids_(std::move(eos_token_ids)) {
  for (const ReasoningFormat format :
       {ReasoningFormat::ThinkTags, ReasoningFormat::ThoughtChannel, ReasoningFormat::Harmony}) {
    std::unordered_set<int32_t>& ids = tag_ids_[format];
    for (const std::string_view tag : format_tags(format)) {
      const std::vector<int32_t> encoded =
          tokenizer.encode(tag, EncodeOptions{.add_bos = false, .parse_special = true});
      if (encoded.size() == 1 && tokenizer.token_kind(encoded[0]) == TokenKind::Control &&
          tokenizer.token_text(encoded[0]) == tag) {
        ids.insert(encoded[0]);
      }
    }
  }
}

void OutputProcessor::add(RequestId request_id, const SamplingParams& params,
                          bool at_sequence_start) {
  State s;
  s.detokenizer = std::make_unique<StreamingDetokenizer>(tokenizer_, at_sequence_start);
  if (!params.stop.empty()) s.stop_strings = std::make_unique<StopStringMatcher>(params.stop);
  s.stop_token_ids.insert(params.stop_token_ids.begin(), params.stop_token_ids.end());
  if (!params.ignore_eos) s.stop_token_ids.insert(eos_token_ids_.begin(), eos_token_ids_.end());
  const ReasoningParams& reasoning = params.reasoning;
  if (reasoning.format != ReasoningFormat::None) {
    s.phase_stream.emplace(reasoning.format, reasoning.starts_in_reasoning);
    s.split_stream.emplace(reasoning.format, reasoning.starts_in_reasoning);
    s.tag_ids = &tag_ids_.at(reasoning.format);
    // A tag of the format ends a message (gpt-oss's <|end|>), not the output.
    for (const int32_t id : *s.tag_ids) s.stop_token_ids.erase(id);
    s.phase.in_reasoning = s.phase_stream->in_reasoning();
    s.phase.in_answer = s.phase_stream->in_answer();
  } else {
    s.phase.in_answer = true;
  }
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

void OutputProcessor::split_emitted(State& s, std::string_view text, std::string& answer,
                                    std::string& reasoning) {
  if (!s.split_stream) {
    answer.append(text);
    return;
  }
  const ReasoningSplit split = s.split_stream->feed(text);
  answer += split.answer;
  reasoning += split.reasoning;
}

TokenOutcome OutputProcessor::on_token(RequestId request_id, int32_t token_id, bool is_forced) {
  State& s = state(request_id);
  TokenOutcome outcome;
  if (s.stop_token_ids.count(token_id)) {
    s.is_stopped = true;
  } else {
    std::string piece;
    if (s.tag_ids && s.tag_ids->count(token_id)) {
      piece = s.detokenizer->finish();  // an incomplete character before a tag is ill-formed
      piece += tokenizer_.token_text(token_id);
    } else {
      piece = s.detokenizer->push(token_id);
    }
    if (s.phase_stream) {
      const bool was_reasoning = s.phase_stream->in_reasoning();
      const bool was_answer = s.phase_stream->in_answer();
      s.phase_stream->feed(piece);
      s.phase.in_reasoning = s.phase_stream->in_reasoning();
      s.phase.in_answer = s.phase_stream->in_answer();
      s.phase.answer_began = !was_answer && s.phase.in_answer;
      if (was_reasoning && s.phase.in_reasoning && !is_forced) ++s.phase.num_reasoning_tokens;
    }
    const size_t old_size = s.text.size();
    s.text += piece;
    if (s.stop_strings && s.text.size() > old_size) {
      const size_t match = s.stop_strings->find(s.text, old_size);
      if (match != std::string_view::npos) {
        s.text.resize(match);
        s.is_stopped = true;
      }
    }
  }
  const size_t safe = std::max(num_safe_bytes(s), s.num_emitted);
  split_emitted(s, std::string_view(s.text).substr(s.num_emitted, safe - s.num_emitted),
                outcome.new_text, outcome.new_reasoning);
  if (s.split_stream) {
    s.answer += outcome.new_text;
    s.reasoning += outcome.new_reasoning;
  }
  s.num_emitted = safe;
  outcome.is_stopped = s.is_stopped;
  return outcome;
}

const ReasoningPhase& OutputProcessor::reasoning_phase(RequestId request_id) {
  return state(request_id).phase;
}

FinishedOutput OutputProcessor::finish(RequestId request_id) {
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
  FinishedOutput out;
  if (s.num_emitted < s.text.size())
    split_emitted(s, std::string_view(s.text).substr(s.num_emitted), out.answer_rest,
                  out.reasoning_rest);
  if (s.split_stream) {
    const ReasoningSplit rest = s.split_stream->finish();
    out.answer_rest += rest.answer;
    out.reasoning_rest += rest.reasoning;
    out.answer = std::move(s.answer) + out.answer_rest;
    out.reasoning = std::move(s.reasoning) + out.reasoning_rest;
  } else {
    out.answer = std::move(s.text);
  }
  out.num_reasoning_tokens = s.phase.num_reasoning_tokens;
  states_.erase(request_id);
  return out;
}

}  // namespace sluice
