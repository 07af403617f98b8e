// Sampling on the GPU, with the CPU sampler's semantics (engine/runner/sampler.h) so that a
// seeded row gives the same token on both backends whenever their logits agree: penalties,
// then greedy argmax (temperature 0; lowest id on ties) or temperature, top-k, softmax, top-p,
// min-p and an inverse-CDF draw with the Philox uniform of engine/core/philox.h keyed by
// (seed, request key, sample index, position), every ordering being "logit descending, then
// token id ascending".
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// One row's parameters (a plain struct copied to the device for the batch).
struct SamplingRow {
  float temperature = 0.0f;
  int top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  uint64_t seed = 0;
  uint64_t request_key = 0;
  uint32_t sample_idx = 0;
  uint32_t position = 0;      // prompt length + output length (the Philox counter)
  int32_t penalty_begin = 0;  // this row's entries in the penalty arrays: [begin, end)
  int32_t penalty_end = 0;
  int32_t mask_row = -1;  // this row's bitmask in token_masks, or -1 when every token is allowed
};

// logits:                [num_rows, vocab_size] float, penalised in place
// rows:                  [num_rows]
// penalty_token_ids:     [num_penalty_entries] the distinct token ids of each row's prompt and
//                        output (the repetition penalty applies to every entry)
// penalty_output_counts: [num_penalty_entries] occurrences in the output (0: prompt only)
// token_masks:           [num_masks, mask_words(vocab_size)] uint32 (may be null when no row has
//                        a mask): bit id % 32 of word id / 32 is set when token id may be drawn.
//                        A masked row's other logits become -inf first, before the NaN check and
//                        the penalties, as the host's grammar mask does (engine/engine.cpp).
// out_tokens:            [num_rows]
// workspace:             at least sampling_workspace_bytes(num_rows, vocab_size) bytes
// A NaN or +inf logit, or a row whose logits are all -inf (a mask that allows nothing), gives
// token -1 for that row (the host reports it as an error naming the request).
KernelStatus sample_tokens(float* logits, const SamplingRow* rows, const int32_t* penalty_token_ids,
                           const int32_t* penalty_output_counts, const uint32_t* token_masks,
                           int32_t* out_tokens, int num_rows, int vocab_size, void* workspace,
                           size_t workspace_bytes, cudaStream_t stream);

// The 32-bit words of one row's token mask.
inline constexpr int mask_words(int vocab_size) {
  return (vocab_size + 31) / 32;
}

// Returns the workspace sample_tokens needs for a batch of that shape.
size_t sampling_workspace_bytes(int num_rows, int vocab_size);

}  // namespace sluice::kernels
