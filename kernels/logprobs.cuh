// Log-probabilities on the device (OpenAI's logprobs, engine/sched/token_logprobs.h): for each row
// that asks, the chosen token's log-probability and the likeliest tokens' under the log-softmax of
// the row's raw logits (before penalties, temperature and grammar masks), so that only a few
// numbers per row cross back to the host instead of the row's logits.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/status.h"

namespace sluice::kernels {

// The most likeliest tokens a row may ask for (OpenAI's top_logprobs cap).
inline constexpr int kMaxTopLogprobs = 20;

// logits:           [num_rows, vocab_size] raw logits
// chosen:           [num_rows] the sampled token of each row
// num_top:          [num_rows] how many likeliest tokens a row wants (0..kMaxTopLogprobs), or -1
//                   when it wants no log-probabilities (its outputs are left alone)
// out_chosen:       [num_rows] logit[chosen] - log(sum(exp(logits))) (the sum in double)
// out_top_ids:      [num_rows, kMaxTopLogprobs] the first num_top entries: the likeliest tokens,
//                   largest logit first, ties by lower id
// out_top_logprobs: [num_rows, kMaxTopLogprobs] their log-probabilities
// Returns an invalid-argument status for negative counts; rows with a chosen id out of range get
// out_chosen = NaN.
KernelStatus token_logprobs(const float* logits, const int32_t* chosen, const int32_t* num_top,
                            float* out_chosen, int32_t* out_top_ids, float* out_top_logprobs,
                            int num_rows, int vocab_size, cudaStream_t stream);

}  // namespace sluice::kernels
