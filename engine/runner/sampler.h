// Turns one request's logits into its next token, with vLLM's semantics: penalties, then greedy
// argmax (temperature 0) or temperature, top-k, softmax, top-p, min-p and an inverse-CDF draw.
//
// Every choice depends only on (logits, params, context): the random number is the Philox
// uniform keyed by (seed, request_key, sample_idx, position) (engine/core/philox.h), and every
// ordering is the total order "logit descending, then token id ascending", so ties break the
// same way in top-k, top-p and the draw. Nothing carries over between calls except scratch
// buffers, so a request samples the same token alone or in any batch, on any thread.
//
// The draw: the kept tokens, in that order, tile [0, total weight); the token whose tile holds
// u * total (u the Philox uniform) is the sample. Top-k, top-p and the draw find their cut by a
// radix selection on the logits' bits, not a sort, so a 128k vocabulary costs a few linear
// passes per token (about 1 ms at temperature 1 on one core of the build machine).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/sched/sampling_params.h"

namespace sluice {

// One token still in the running during a draw (scratch of Sampler, public only for its size).
struct SamplingCandidate {
  double weight;  // exp((logit - max_logit) / temperature), unnormalised, > 0
  float logit;    // penalised logit; orders candidates together with token_id
  int32_t token_id;
};

// Throws sluice::Error naming the first invalid field of params (and its value).
void validate_sampling_params(const SamplingParams& params);

// Samples next tokens. Holds reusable scratch buffers sized to the vocabulary, so keep one per
// thread and reuse it; results never depend on what it sampled before.
class Sampler {
 public:
  // Returns the next token id for one request. logits: [vocab_size], penalised in place (on
  // return they hold the logits after penalties, before temperature). Throws sluice::Error on a
  // NaN or +inf logit, when every logit is -inf, or on a context token id outside the
  // vocabulary. Precondition: params passed validate_sampling_params; logits is not empty.
  int32_t sample(std::span<float> logits, const SamplingParams& params,
                 const SamplingContext& context);

  // Applies the repetition, frequency and presence penalties of params to logits in place
  // (repetition first, as vLLM does). Throws sluice::Error on a context token id outside
  // [0, logits.size()). Precondition: params passed validate_sampling_params.
  void apply_penalties(std::span<float> logits, const SamplingParams& params,
                       const SamplingContext& context);

 private:
  // Grows the per-token scratch to vocab_size entries (all zero).
  void reserve_vocab(size_t vocab_size);
  // Divides/multiplies the logits of every token in prompt or output by the penalty.
  void apply_repetition_penalty(std::span<float> logits, float penalty,
                                const SamplingContext& context);
  // Subtracts frequency * count + presence from the logits of tokens in the output.
  void apply_output_penalties(std::span<float> logits, const SamplingParams& params,
                              std::span<const int32_t> output_token_ids);

  std::vector<int32_t> output_counts_;         // [vocab_size], all zero between calls
  std::vector<uint8_t> is_penalised_;          // [vocab_size], all zero between calls
  std::vector<int32_t> touched_ids_;           // ids whose scratch entries must be reset
  std::vector<SamplingCandidate> candidates_;  // in ascending id order throughout a draw
  std::vector<SamplingCandidate> scratch_;     // radix selection's working set
};

}  // namespace sluice
