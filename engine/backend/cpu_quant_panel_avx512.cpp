// The AVX-512 VNNI panel kernels (cpu_quant_panel.h): lane r of every register is row r.
// Weights with a min are never negative and are vpdpbusd's unsigned operand; the others take
// q + 128 activations and the panel's 128 * sum(w) correction off each block's sum, as the tile
// kernels do (cpu_quant_dot_avx512.cpp).
#include "engine/backend/cpu_quant_panel.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "engine/backend/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

#if SLUICE_QUANT_X86

namespace avx512_panel_kernels {

// Transposes sixteen rows of sixteen 32-bit words: out[k] = word k of rows 0..15.
SLUICE_AVX512_VNNI_INLINE void transpose16(const __m512i* rows, __m512i* out) {
  __m512i t[16];
  __m512i u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(rows[2 * i], rows[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(rows[2 * i], rows[2 * i + 1]);
  }
  // u[4i + k], 128 bits j: word 4j + k of rows 4i..4i+3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i p01 = _mm512_shuffle_i32x4(u[k], u[4 + k], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i p23 = _mm512_shuffle_i32x4(u[k], u[4 + k], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512i q01 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512i q23 = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], _MM_SHUFFLE(3, 2, 3, 2));
    out[k] = _mm512_shuffle_i32x4(p01, q01, _MM_SHUFFLE(2, 0, 2, 0));
    out[4 + k] = _mm512_shuffle_i32x4(p01, q01, _MM_SHUFFLE(3, 1, 3, 1));
    out[8 + k] = _mm512_shuffle_i32x4(p23, q23, _MM_SHUFFLE(2, 0, 2, 0));
    out[12 + k] = _mm512_shuffle_i32x4(p23, q23, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

// The values: 64 elements of all rows at a time, transposed as 32-bit words.
SLUICE_AVX512_VNNI void pack_values(const UnpackedWeights& rows, QuantPanel& out) {
  const int64_t num_steps = rows.w_stride / 4;
  out.w.resize(static_cast<size_t>(num_steps) * 64);
  for (int64_t c = 0; c < rows.w_stride / kQuantChunk; ++c) {
    __m512i in[16];
    for (int r = 0; r < kQuantPanelRows; ++r) {
      in[r] = r < rows.num_rows ? _mm512_load_si512(rows.row_w(r) + c * kQuantChunk)
                                : _mm512_setzero_si512();
    }
    __m512i steps[16];
    transpose16(in, steps);
    for (int k = 0; k < 16; ++k) _mm512_store_si512(out.w.data() + (c * 16 + k) * 64, steps[k]);
  }
}

// The sum of each row's values over `num_steps` steps from `step`.
SLUICE_AVX512_VNNI_INLINE __m512i row_sums(const QuantPanel& panel, int64_t step, int num_steps) {
  const __m512i ones = _mm512_set1_epi8(1);
  __m512i sum = _mm512_setzero_si512();
  for (int k = 0; k < num_steps; ++k) {
    sum = _mm512_dpbusd_epi32(sum, ones, _mm512_load_si512(panel.w.data() + (step + k) * 64));
  }
  return sum;
}

SLUICE_AVX512_VNNI void pack(const UnpackedWeights& rows, QuantPanel& out) {
  const QuantKernelTraits& traits = *find_quant_kernel_traits(rows.dtype);
  out.dtype = rows.dtype;
  out.family = rows.family;
  out.num_rows = rows.num_rows;
  out.cols = rows.cols;
  pack_values(rows, out);
  const bool super256 =
      rows.family == QuantFamily::Super256 || rows.family == QuantFamily::Super256Min;
  const bool has_min =
      rows.family == QuantFamily::Block32Min || rows.family == QuantFamily::Super256Min;
  const int64_t block_elements = super256 ? quant::kBlockK : quant::kBlock32;
  const int64_t num_blocks = rows.cols / block_elements;
  out.group_elements = rows.dtype == DType::Q4_K || rows.dtype == DType::Q5_K ? 32 : 16;
  const int64_t groups_per_block = super256 ? block_elements / out.group_elements : 0;
  const auto row_count = static_cast<size_t>(kQuantPanelRows);
  out.d.resize(static_cast<size_t>(num_blocks) * row_count);
  out.m.resize(has_min ? out.d.size() : 0);
  out.scale.resize(static_cast<size_t>(num_blocks * groups_per_block) * row_count);
  out.mins.resize(rows.family == QuantFamily::Super256Min
                      ? static_cast<size_t>(rows.cols / 32) * row_count
                      : 0);
  for (int64_t b = 0; b < num_blocks; ++b) {
    for (int r = 0; r < kQuantPanelRows; ++r) {
      const bool real = r < rows.num_rows;
      out.d[b * 16 + r] = real ? rows.row_d(r)[b] : 0.0f;
      if (has_min) out.m[b * 16 + r] = real ? rows.row_m(r)[b] : 0.0f;
      for (int64_t g = 0; g < groups_per_block; ++g) {
        const int64_t group16 = (b * block_elements + g * out.group_elements) / 16;
        out.scale[(b * groups_per_block + g) * 16 + r] =
            real ? rows.row_group_scale(r)[group16] : 0;
      }
    }
  }
  for (int64_t k = 0; k < static_cast<int64_t>(out.mins.size()) / 16; ++k) {
    for (int r = 0; r < kQuantPanelRows; ++r) {
      const int8_t* mins = r < rows.num_rows ? rows.row_mins(r) + 2 * k : nullptr;
      const auto low = static_cast<uint16_t>(static_cast<int16_t>(mins ? mins[0] : 0));
      const auto high = static_cast<uint16_t>(static_cast<int16_t>(mins ? mins[1] : 0));
      out.mins[k * 16 + r] =
          static_cast<int32_t>(static_cast<uint32_t>(low) | uint32_t{high} << 16);
    }
  }
  out.correction.resize(traits.has_negative_values ? out.d.size() : 0);
  if (!traits.has_negative_values) return;
  const int group_steps = out.group_elements / 4;
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512i sum;
    if (!super256) {
      sum = row_sums(out, b * quant::kBlock32 / 4, quant::kBlock32 / 4);
    } else {
      sum = _mm512_setzero_si512();
      for (int64_t g = 0; g < groups_per_block; ++g) {
        const __m512i scale = _mm512_load_si512(out.scale.data() + (b * groups_per_block + g) * 16);
        const __m512i group =
            row_sums(out, (b * block_elements + g * out.group_elements) / 4, group_steps);
        sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(group, scale));
      }
    }
    _mm512_store_si512(out.correction.data() + b * 16, _mm512_slli_epi32(sum, 7));
  }
}

SLUICE_AVX512_VNNI_INLINE __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof v);
  return _mm512_set1_epi32(v);
}

// acc += the four elements at step `step` of every row times token t's four at element 4 * step.
template <bool kHasMin>
SLUICE_AVX512_VNNI_INLINE __m512i dot4(__m512i acc, __m512i w, const int8_t* a) {
  return kHasMin ? _mm512_dpbusd_epi32(acc, w, broadcast4(a))
                 : _mm512_dpbusd_epi32(acc, broadcast4(a), w);
}

template <int kTokens>
SLUICE_AVX512_VNNI_INLINE void store_tokens(const __m512* out, int num_rows, float* y,
                                            int64_t ldy) {
  const auto mask = static_cast<__mmask16>((1u << num_rows) - 1);
  SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t)
      _mm512_mask_storeu_ps(y + t * ldy, mask, out[t]);
}

template <bool kHasMin, int kTokens>
SLUICE_AVX512_VNNI void block32_panel(const QuantPanel& panel, const QuantTokenPointers<kTokens>& p,
                                      float* y, int64_t ldy) {
  __m512 acc[kTokens];
  SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] = _mm512_setzero_ps();
  const int8_t* w = panel.w.data();
  for (int64_t b = 0; b < panel.cols / quant::kBlock32; ++b) {
    __m512i sum[kTokens];
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) sum[t] = _mm512_setzero_si512();
    for (int k = 0; k < quant::kBlock32 / 4; ++k) {
      const __m512i wv = _mm512_load_si512(w + (b * 8 + k) * 64);
      const int64_t e = b * quant::kBlock32 + 4 * k;
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) sum[t] =
          dot4<kHasMin>(sum[t], wv, p.a[t] + e);
    }
    const __m512 dw = _mm512_load_ps(panel.d.data() + b * 16);
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      if constexpr (!kHasMin) {
        sum[t] = _mm512_sub_epi32(sum[t], _mm512_load_si512(panel.correction.data() + b * 16));
      }
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]),
                               _mm512_mul_ps(dw, _mm512_set1_ps(p.dx[t][b])), acc[t]);
      if constexpr (kHasMin) {
        acc[t] = _mm512_fmadd_ps(_mm512_load_ps(panel.m.data() + b * 16),
                                 _mm512_set1_ps(p.sx[t][b]), acc[t]);
      }
    }
  }
  store_tokens<kTokens>(acc, panel.num_rows, y, ldy);
}

template <bool kHasMin, int kGroup, int kTokens>
SLUICE_AVX512_VNNI void super256_panel(const QuantPanel& panel,
                                       const QuantTokenPointers<kTokens>& p, float* y,
                                       int64_t ldy) {
  constexpr int kGroups = quant::kBlockK / kGroup;
  __m512 acc[kTokens];
  __m512 min_acc[kTokens];
  SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] = min_acc[t] = _mm512_setzero_ps();
  const int8_t* w = panel.w.data();
  for (int64_t sb = 0; sb < panel.cols / quant::kBlockK; ++sb) {
    __m512i sum[kTokens];
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) sum[t] = _mm512_setzero_si512();
    for (int g = 0; g < kGroups; ++g) {
      __m512i group[kTokens];
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) group[t] = _mm512_setzero_si512();
      const int64_t e0 = sb * quant::kBlockK + g * kGroup;
      SLUICE_QUANT_UNROLL for (int k = 0; k < kGroup / 4; ++k) {
        const __m512i wv = _mm512_load_si512(w + (e0 / 4 + k) * 64);
        SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
          group[t] = dot4<kHasMin>(group[t], wv, p.a[t] + e0 + 4 * k);
        }
      }
      const __m512i scale = _mm512_load_si512(panel.scale.data() + (sb * kGroups + g) * 16);
      SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
        sum[t] = _mm512_add_epi32(sum[t], _mm512_mullo_epi32(group[t], scale));
      }
    }
    const __m512 dw = _mm512_load_ps(panel.d.data() + sb * 16);
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) {
      if constexpr (!kHasMin) {
        sum[t] = _mm512_sub_epi32(sum[t], _mm512_load_si512(panel.correction.data() + sb * 16));
      }
      const __m512 dx = _mm512_set1_ps(p.dx[t][sb]);
      acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[t]), _mm512_mul_ps(dw, dx), acc[t]);
      if constexpr (kHasMin) {
        __m512i m = _mm512_setzero_si512();
        SLUICE_QUANT_UNROLL for (int k = 0; k < 8; ++k) {
          int32_t bsum_pair;
          std::memcpy(&bsum_pair, p.bsum[t] + sb * 16 + 2 * k, sizeof bsum_pair);
          m = _mm512_dpwssd_epi32(m, _mm512_load_si512(panel.mins.data() + (sb * 8 + k) * 16),
                                  _mm512_set1_epi32(bsum_pair));
        }
        min_acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(m),
                                     _mm512_mul_ps(_mm512_load_ps(panel.m.data() + sb * 16), dx),
                                     min_acc[t]);
      }
    }
  }
  if constexpr (kHasMin) {
    SLUICE_QUANT_UNROLL for (int t = 0; t < kTokens; ++t) acc[t] =
        _mm512_sub_ps(acc[t], min_acc[t]);
  }
  store_tokens<kTokens>(acc, panel.num_rows, y, ldy);
}

struct PanelCall {
  const QuantPanel& panel;
  const QuantizedActivations& act;
  int64_t t0;
  float* y;
  int64_t ldy;

  template <int kTokens>
  SLUICE_AVX512_VNNI void run() const {
    const QuantTokenPointers<kTokens> p(act, t0);
    switch (panel.family) {
      case QuantFamily::Block32:
        return block32_panel<false, kTokens>(panel, p, y, ldy);
      case QuantFamily::Block32Min:
        return block32_panel<true, kTokens>(panel, p, y, ldy);
      case QuantFamily::Super256:
        return super256_panel<false, 16, kTokens>(panel, p, y, ldy);
      case QuantFamily::Super256Min:
        if (panel.group_elements == 32) return super256_panel<true, 32, kTokens>(panel, p, y, ldy);
        return super256_panel<true, 16, kTokens>(panel, p, y, ldy);
    }
  }
};

}  // namespace avx512_panel_kernels

bool has_quant_panel_kernel(QuantKernelIsa isa) {
  return isa == QuantKernelIsa::Avx512Vnni && quant_kernel_isa_supported(isa);
}

void pack_quant_panel(const UnpackedWeights& rows, QuantPanel& out) {
  assert(rows.num_rows >= 1 && rows.num_rows <= kQuantPanelRows);
  avx512_panel_kernels::pack(rows, out);
}

void quant_panel_tile(const QuantPanel& panel, const QuantizedActivations& act, int64_t t0,
                      int num_tokens, float* y, int64_t ldy) {
  assert(num_tokens >= 1 && num_tokens <= kQuantPanelTokens);
  assert(act.cols == panel.cols);
  static_assert(kQuantPanelTokens == 6, "update the cases below");
  const avx512_panel_kernels::PanelCall call{panel, act, t0, y, ldy};
  switch (num_tokens) {
    case 1:
      return call.run<1>();
    case 2:
      return call.run<2>();
    case 3:
      return call.run<3>();
    case 4:
      return call.run<4>();
    case 5:
      return call.run<5>();
    default:
      return call.run<6>();
  }
}

#else

bool has_quant_panel_kernel(QuantKernelIsa) {
  return false;
}
void pack_quant_panel(const UnpackedWeights&, QuantPanel&) {}
void quant_panel_tile(const QuantPanel&, const QuantizedActivations&, int64_t, int, float*,
                      int64_t) {}

#endif  // SLUICE_QUANT_X86

}  // namespace sluice
