#include "engine/backend/cpu/cpu_quant_dot.h"

#include <cassert>
#include <cmath>

#include "engine/backend/cpu/cpu_kernel_ceiling.h"
#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/error.h"

#if SLUICE_QUANT_X86
#include <cpuid.h>
#endif

namespace sluice {

namespace {

// ---- The scalar version: the definition the SIMD versions reproduce bit for bit.

int32_t int_dot(const int8_t* w, const int8_t* a, int64_t n) {
  int32_t sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<int32_t>(w[i]) * static_cast<int32_t>(a[i]);
  return sum;
}

float block32_dot(const UnpackedWeights& weights, int r, const QuantizedActivations& act,
                  int64_t t) {
  const int8_t* w = weights.row_w(r);
  const int8_t* a = act.token_qs(t);
  const float* dw = weights.row_d(r);
  const float* dx = act.token_scale(t);
  const bool has_min = weights.family == QuantFamily::Block32Min;
  float acc = 0.0f;
  for (int64_t b = 0; b < weights.cols / quant::kBlock32; ++b) {
    const int64_t i = b * quant::kBlock32;
    acc = std::fma(static_cast<float>(int_dot(w + i, a + i, quant::kBlock32)), dw[b] * dx[b], acc);
    if (has_min) acc = std::fma(weights.row_m(r)[b], act.token_sum(t)[b], acc);
  }
  return acc;
}

float super256_dot(const UnpackedWeights& weights, int r, const QuantizedActivations& act,
                   int64_t t) {
  const int8_t* w = weights.row_w(r);
  const int8_t* a = act.token_qs(t);
  const int8_t* group_scale = weights.row_group_scale(r);
  const bool has_min = weights.family == QuantFamily::Super256Min;
  float acc = 0.0f;
  float min_acc = 0.0f;
  for (int64_t sb = 0; sb < weights.cols / quant::kBlockK; ++sb) {
    int32_t sum = 0;
    for (int64_t g = sb * 16; g < (sb + 1) * 16; ++g)
      sum += group_scale[g] * int_dot(w + 16 * g, a + 16 * g, 16);
    const float dx = act.token_scale(t)[sb];
    acc = std::fma(static_cast<float>(sum), weights.row_d(r)[sb] * dx, acc);
    if (has_min) {
      const int8_t* mins = weights.row_mins(r) + sb * 16;
      const int16_t* bsum = act.token_bsum(t) + sb * 16;
      int32_t min_sum = 0;
      for (int g = 0; g < 16; ++g) min_sum += mins[g] * bsum[g];
      min_acc = std::fma(static_cast<float>(min_sum), weights.row_m(r)[sb] * dx, min_acc);
    }
  }
  return has_min ? acc - min_acc : acc;
}

void quant_dot_tile_scalar(const UnpackedWeights& weights, int row0, int num_rows,
                           const QuantizedActivations& act, int64_t t0, int num_tokens, float* y,
                           int64_t ldy) {
  assert(!act.is_offset_u8);  // the scalar kernels take signed activations
  const bool super256 =
      weights.family == QuantFamily::Super256 || weights.family == QuantFamily::Super256Min;
  for (int t = 0; t < num_tokens; ++t) {
    for (int r = 0; r < num_rows; ++r) {
      y[t * ldy + r] = super256 ? super256_dot(weights, row0 + r, act, t0 + t)
                                : block32_dot(weights, row0 + r, act, t0 + t);
    }
  }
}

#if SLUICE_QUANT_X86
// Read once: quant_kernel_isa_supported is asked on every product (in assertions), and CPUID
// traps to the hypervisor in a VM.
bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
  }();
  return has;
}
#endif

bool cpu_has(QuantKernelIsa isa) {
#if SLUICE_QUANT_X86
  __builtin_cpu_init();
  switch (isa) {
    case QuantKernelIsa::Scalar:
      return true;
    case QuantKernelIsa::Avx2:
      // (with F16C, which the direct kernels use and every AVX2 CPU has; clang's
      // __builtin_cpu_supports does not know "f16c", so CPUID leaf 1, ECX bit 29)
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpu_has_f16c();
    case QuantKernelIsa::Avx512Vnni:
      // (F16C, which the direct kernels use too, comes with every AVX-512 CPU.)
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
             __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("fma");
  }
  return false;
#else
  return isa == QuantKernelIsa::Scalar;
#endif
}

}  // namespace

QuantKernelIsa best_quant_kernel_isa() {
  static const QuantKernelIsa best = [] {
    const CpuKernelCeiling ceiling = cpu_kernel_ceiling();
    if (ceiling == CpuKernelCeiling::kPortable) return QuantKernelIsa::Scalar;
    if (ceiling == CpuKernelCeiling::kNative && cpu_has(QuantKernelIsa::Avx512Vnni))
      return QuantKernelIsa::Avx512Vnni;
    if (cpu_has(QuantKernelIsa::Avx2)) return QuantKernelIsa::Avx2;
    return QuantKernelIsa::Scalar;
  }();
  return best;
}

bool quant_kernel_isa_supported(QuantKernelIsa isa) {
  return cpu_has(isa);
}

const char* quant_kernel_isa_name(QuantKernelIsa isa) {
  switch (isa) {
    case QuantKernelIsa::Scalar:
      return "scalar";
    case QuantKernelIsa::Avx2:
      return "AVX2";
    case QuantKernelIsa::Avx512Vnni:
      return "AVX-512 VNNI";
  }
  return "?";
}

void quant_dot_tile(const UnpackedWeights& weights, int row0, int num_rows,
                    const QuantizedActivations& activations, int64_t t0, int num_tokens, float* y,
                    int64_t ldy, QuantKernelIsa isa) {
  assert(num_rows >= 1 && num_rows <= kQuantTileRows);        // a tile is at most 2 x 4
  assert(num_tokens >= 1 && num_tokens <= kQuantTileTokens);  // (see the precondition)
  assert(weights.cols == activations.cols);                   // the same product
  assert(activations.is_offset_u8 == wants_offset_activations(isa, weights.dtype));
  switch (isa) {
#if SLUICE_QUANT_X86
    case QuantKernelIsa::Avx2:
      return quant_dot_tile_avx2(weights, row0, num_rows, activations, t0, num_tokens, y, ldy);
    case QuantKernelIsa::Avx512Vnni:
      return quant_dot_tile_avx512_vnni(weights, row0, num_rows, activations, t0, num_tokens, y,
                                        ldy);
#endif
    default:
      return quant_dot_tile_scalar(weights, row0, num_rows, activations, t0, num_tokens, y, ldy);
  }
}

bool has_direct_quant_kernel(DType dtype, QuantKernelIsa isa) {
#if SLUICE_QUANT_X86
  return (isa == QuantKernelIsa::Avx2 && has_direct_quant_kernel_avx2(dtype)) ||
         (isa == QuantKernelIsa::Avx512Vnni && has_direct_quant_kernel_avx512_vnni(dtype));
#else
  (void)dtype;
  (void)isa;
  return false;
#endif
}

void quant_direct_tile(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                       int64_t cols, const QuantizedActivations& activations, int64_t t0,
                       int num_tokens, float* y, int64_t ldy, QuantKernelIsa isa) {
  assert(num_rows >= 1 && num_rows <= kQuantTileRows);
  assert(num_tokens >= 1 && num_tokens <= kQuantTileTokens);
  assert(cols == activations.cols);
  assert(activations.is_offset_u8 == wants_offset_activations(isa, dtype));
  assert(has_direct_quant_kernel(dtype, isa));
#if SLUICE_QUANT_X86
  if (isa == QuantKernelIsa::Avx2) {
    quant_direct_tile_avx2(dtype, rows, row_bytes, num_rows, cols, activations, t0, num_tokens, y,
                           ldy);
  } else {
    quant_direct_tile_avx512_vnni(dtype, rows, row_bytes, num_rows, cols, activations, t0,
                                  num_tokens, y, ldy);
  }
#else
  (void)isa;
  (void)dtype, (void)rows, (void)row_bytes, (void)num_rows, (void)cols, (void)activations;
  (void)t0, (void)num_tokens, (void)y, (void)ldy;
#endif
}

bool has_direct_rows_kernel(DType dtype, QuantKernelIsa isa) {
#if SLUICE_QUANT_X86
  return isa == QuantKernelIsa::Avx512Vnni && has_direct_rows_kernel_avx512_vnni(dtype);
#else
  (void)dtype;
  (void)isa;
  return false;
#endif
}

int direct_rows_max_tokens(DType dtype, QuantKernelIsa isa) {
  assert(has_direct_rows_kernel(dtype, isa));
#if SLUICE_QUANT_X86
  (void)isa;
  return direct_rows_max_tokens_avx512_vnni(dtype);
#else
  (void)dtype;
  (void)isa;
  return 0;
#endif
}

void quant_direct_rows(DType dtype, const uint8_t* data, size_t row_bytes, int64_t row_begin,
                       int64_t row_end, int64_t cols, const QuantizedActivations& activations,
                       float* y, int64_t ldy, QuantKernelIsa isa) {
  assert(has_direct_rows_kernel(dtype, isa));  // (before direct_rows_max_tokens asks)
  assert(activations.num_tokens >= 1 &&
         activations.num_tokens <= direct_rows_max_tokens(dtype, isa));
  assert(cols == activations.cols);
  assert(activations.is_offset_u8 == wants_offset_activations(isa, dtype));
  assert(has_direct_rows_kernel(dtype, isa));
#if SLUICE_QUANT_X86
  (void)isa;
  quant_direct_rows_avx512_vnni(dtype, data, row_bytes, row_begin, row_end, cols, activations, y,
                                ldy);
#else
  (void)isa;
  (void)dtype, (void)data, (void)row_bytes, (void)row_begin, (void)row_end, (void)cols;
  (void)activations, (void)y, (void)ldy;
#endif
}

bool has_direct_wide_kernel(DType dtype, QuantKernelIsa isa) {
  return SLUICE_QUANT_X86 && (isa == QuantKernelIsa::Avx2 || isa == QuantKernelIsa::Avx512Vnni) &&
         dtype == DType::Q8_0;
}

void quant_direct_wide(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t cols,
                       const QuantizedActivations& activations, int64_t t, float* y,
                       QuantKernelIsa isa) {
  assert(cols == activations.cols);
  assert(activations.is_offset_u8 == wants_offset_activations(isa, dtype));
  assert(has_direct_wide_kernel(dtype, isa));
#if SLUICE_QUANT_X86
  if (isa == QuantKernelIsa::Avx512Vnni) {
    quant_direct_wide_avx512_vnni(dtype, rows, row_bytes, cols, activations, t, y);
  } else {
    quant_direct_wide_avx2(dtype, rows, row_bytes, cols, activations, t, y);
  }
#else
  (void)isa;
  (void)dtype, (void)rows, (void)row_bytes, (void)cols, (void)activations, (void)t, (void)y;
#endif
}

float quant_dot(DType dtype, const void* weight_row, const void* activation_blocks, int64_t cols,
                QuantKernelIsa isa) {
  if (!has_quant_kernels(dtype)) fail("quant_dot: no quantized kernels for ", dtype_name(dtype));
  if (!dtype_row_is_valid(dtype, cols))
    fail("quant_dot: a row of ", cols, " is not whole ", dtype_name(dtype), " blocks");
  thread_local UnpackedWeights weights;
  thread_local QuantizedActivations activations;
  unpack_weight_rows(dtype, static_cast<const uint8_t*>(weight_row), dtype_num_bytes(dtype, cols),
                     1, cols, weights);
  shape_activations(dtype, 1, cols, wants_offset_activations(isa, dtype), activations);
  store_activation_blocks(activation_blocks, 0, activations);
  float y = 0.0f;
  quant_dot_tile(weights, 0, 1, activations, 0, 1, &y, 1, isa);
  return y;
}

}  // namespace sluice
