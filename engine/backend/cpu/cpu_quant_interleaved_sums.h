// Sums of each token's activations that the interleaved kernels (cpu_quant_interleave.h) add or
// take off once per block or super-block instead of per product: filled per call by the thread
// that runs the kernels (a few hundred integers a token), shared by every kernel version.
#pragma once

#include <cstdint>

#include "engine/backend/cpu/cpu_quant_operands.h"

namespace sluice {

// [num_tokens][per_token] 32-bit words.
struct TokenSums {
  AlignedArray<int32_t> sums;
  int64_t per_token = 0;

  const int32_t* token(int64_t t) const { return sums.data() + t * per_token; }
};

// Q4_K's min products: per super-block four words, (bs_2i, bs_2i+1) as int16 in one word, where
// bs_j = bsum_2j + bsum_2j+1 is the sum of the 32 activations of group j (|bs_j| <= 2 * 16 * 127).
void fill_q4k_pairs(const QuantizedActivations& act, TokenSums& out);

// Q6_K's q - 32: per super-block eight words, (bsum_4i, bsum_4i+2) and (bsum_4i+1, bsum_4i+3) as
// int16 pairs, the right operand of the scale * bsum products.
void fill_q6k_pairs(const QuantizedActivations& act, TokenSums& out);

// Q8_0's stored q + 128: per block 128 * (the sum of its 32 activations).
void fill_q8_0_sums(const QuantizedActivations& act, TokenSums& out);

}  // namespace sluice
