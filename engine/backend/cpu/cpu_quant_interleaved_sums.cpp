#include "engine/backend/cpu/cpu_quant_interleaved_sums.h"

#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

int32_t int16_pair(int low, int high) {
  return static_cast<int32_t>(uint32_t{static_cast<uint16_t>(low)} |
                              uint32_t{static_cast<uint16_t>(high)} << 16);
}

void shape_sums(const QuantizedActivations& act, int64_t per_token, TokenSums& out) {
  out.per_token = per_token;
  out.sums.resize(static_cast<size_t>(act.num_tokens * per_token));
}

}  // namespace

void fill_q4k_pairs(const QuantizedActivations& act, TokenSums& out) {
  shape_sums(act, act.cols / quant::kBlockK * 4, out);
  for (int64_t t = 0; t < act.num_tokens; ++t) {
    const int16_t* bsum = act.token_bsum(t);
    int32_t* pairs = out.sums.data() + t * out.per_token;
    for (int64_t i = 0; i < out.per_token; ++i) {
      pairs[i] = int16_pair(bsum[4 * i] + bsum[4 * i + 1], bsum[4 * i + 2] + bsum[4 * i + 3]);
    }
  }
}

void fill_q6k_pairs(const QuantizedActivations& act, TokenSums& out) {
  shape_sums(act, act.cols / quant::kBlockK * 8, out);
  for (int64_t t = 0; t < act.num_tokens; ++t) {
    const int16_t* bsum = act.token_bsum(t);
    int32_t* pairs = out.sums.data() + t * out.per_token;
    for (int64_t i = 0; i < out.per_token / 2; ++i) {
      const int16_t* b = bsum + 4 * i;
      pairs[2 * i] = int16_pair(b[0], b[2]);
      pairs[2 * i + 1] = int16_pair(b[1], b[3]);
    }
  }
}

void fill_q8_0_sums(const QuantizedActivations& act, TokenSums& out) {
  shape_sums(act, act.cols / quant::kBlock32, out);
  for (int64_t t = 0; t < act.num_tokens; ++t) {
    const int8_t* x = act.token_qs(t);
    int32_t* sums = out.sums.data() + t * out.per_token;
    for (int64_t b = 0; b < out.per_token; ++b) {
      int32_t sum = 0;
      for (int i = 0; i < quant::kBlock32; ++i) sum += x[b * quant::kBlock32 + i];
      sums[b] = 128 * sum;
    }
  }
}

}  // namespace sluice
