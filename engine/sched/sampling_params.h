// Per-request generation settings, in the vocabulary of vLLM's SamplingParams.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/reasoning/reasoning_parser.h"

namespace sluice {

struct GrammarSource;

struct SamplingParams {
  int n = 1;                        // samples of this prompt
  float temperature = 0.0f;         // 0 = greedy (argmax, lowest id on ties)
  int top_k = 0;                    // 0 or negative = off
  float top_p = 1.0f;               // 1 = off
  float min_p = 0.0f;               // 0 = off
  float repetition_penalty = 1.0f;  // 1 = off; applies to prompt and output tokens
  float presence_penalty = 0.0f;    // 0 = off; applies to output tokens
  float frequency_penalty = 0.0f;   // 0 = off; applies to output tokens
  uint64_t seed = 0;                // with the request key, sample index and position, keys the RNG
  int max_tokens = 256;             // new tokens at most
  std::vector<std::string> stop;    // stop strings (not included in the output)
  std::vector<int32_t> stop_token_ids;  // extra ids that end generation (not included)
  bool ignore_eos = false;              // keep going past EOS (benchmarks)
  // -1: none; k >= 0: each output token's log-probability and the k likeliest tokens' (at most
  // kMaxTopLogprobs), from the model's raw distribution (engine/sched/token_logprobs.h).
  int logprobs = -1;
  // Constrains the output to the sentences of this grammar source (null: free text); shared,
  // never changed. A request carries the source, not a compiled grammar: whoever runs it compiles
  // it (the engine service through its GrammarCache; a remote server itself).
  std::shared_ptr<const GrammarSource> grammar;
  // A thinking model's reasoning: how the output splits into reasoning and answer, and a budget
  // of reasoning tokens. With a grammar, the grammar starts when the reasoning ends.
  ReasoningParams reasoning;
};

// What the sampler needs to know about a request beyond its logits.
struct SamplingContext {
  std::span<const int32_t> prompt_token_ids;  // [num_prompt_tokens]
  std::span<const int32_t> output_token_ids;  // [num_output_tokens] generated so far
  uint64_t request_key = 0;  // stable per request across runs (e.g. the row id); keys the RNG
  uint32_t sample_idx = 0;   // which of the params.n samples of the prompt this is
};

}  // namespace sluice
