#include "engine/backend/cpu/cpu_math.h"

namespace sluice {

SLUICE_CPU_CLONES void exp_inplace(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = fast_exp(x[i]);
}

SLUICE_CPU_CLONES void silu_mul_inplace(float* __restrict gate, const float* __restrict up,
                                        int64_t n) {
  for (int64_t i = 0; i < n; ++i) gate[i] = gate[i] / (1.0f + fast_exp(-gate[i])) * up[i];
}

}  // namespace sluice
