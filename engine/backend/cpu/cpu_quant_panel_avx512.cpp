// The AVX-512 VNNI panel kernels (cpu_quant_panel.h): lane r of every register is row r.
// Weights with a min are never negative and are vpdpbusd's unsigned operand; the others take
// q + 128 activations and the panel's 128 * sum(w) correction off each block's sum, as the tile
// kernels do (cpu_quant_dot_avx512.cpp).
#include "engine/backend/cpu/cpu_quant_panel.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <type_traits>

#include "engine/backend/cpu/cpu_quant_raw_rows_avx512.h"

namespace sluice {

#if SLUICE_QUANT_X86

namespace avx512_panel_kernels {

using namespace avx512_vnni_kernels;  // the weight sources

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

// Two groups' mins as the int16 pair vpdpwssd multiplies with two bsums.
inline int32_t min_pair(const int8_t* mins) {
  const auto low = static_cast<uint16_t>(int16_t{mins[0]});
  const auto high = static_cast<uint16_t>(int16_t{mins[1]});
  return static_cast<int32_t>(uint32_t{low} | uint32_t{high} << 16);
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

// The types with negative values take q + 128 activations: each block's 128 * sum(w) (of
// super-blocks: 128 * sum over groups of scale * sum(w)), for the kernel to take off again.
SLUICE_AVX512_VNNI void add_corrections(QuantPanel& out) {
  const bool has_negative_values = find_quant_kernel_traits(out.dtype)->has_negative_values;
  out.correction.resize(has_negative_values ? out.d.size() : 0);
  if (!has_negative_values) return;
  const bool super256 = out.family == QuantFamily::Super256;  // (no min: Q3_K, Q6_K)
  const int64_t num_blocks = static_cast<int64_t>(out.d.size()) / kQuantPanelRows;
  const int64_t groups = quant::kBlockK / out.group_elements;
  for (int64_t b = 0; b < num_blocks; ++b) {
    __m512i sum;
    if (!super256) {
      sum = row_sums(out, b * quant::kBlock32 / 4, quant::kBlock32 / 4);
    } else {
      sum = _mm512_setzero_si512();
      for (int64_t g = 0; g < groups; ++g) {
        const __m512i scale = _mm512_load_si512(out.scale.data() + (b * groups + g) * 16);
        const __m512i group = row_sums(out, (b * quant::kBlockK + g * out.group_elements) / 4,
                                       out.group_elements / 4);
        sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(group, scale));
      }
    }
    _mm512_store_si512(out.correction.data() + b * 16, _mm512_slli_epi32(sum, 7));
  }
}

// The shapes and per-row fields every packing shares: sizes out's arrays for rows of dtype.
void shape_panel(DType dtype, int num_rows, int64_t cols, QuantPanel& out) {
  out.dtype = dtype;
  out.family = quant_family(dtype);
  out.num_rows = num_rows;
  out.cols = cols;
  const bool super256 =
      out.family == QuantFamily::Super256 || out.family == QuantFamily::Super256Min;
  const bool has_min =
      out.family == QuantFamily::Block32Min || out.family == QuantFamily::Super256Min;
  const int64_t num_blocks = cols / (super256 ? quant::kBlockK : quant::kBlock32);
  out.group_elements = dtype == DType::Q4_K || dtype == DType::Q5_K ? 32 : 16;
  const auto row_count = static_cast<size_t>(kQuantPanelRows);
  out.w.resize(static_cast<size_t>((cols + kQuantChunk - 1) / kQuantChunk) * kQuantChunk / 4 * 64);
  out.d.resize(static_cast<size_t>(num_blocks) * row_count);
  out.m.resize(has_min ? out.d.size() : 0);
  out.scale.resize(super256 ? static_cast<size_t>(cols / out.group_elements) * row_count : 0);
  out.mins.resize(
      out.family == QuantFamily::Super256Min ? static_cast<size_t>(cols / 32) * row_count : 0);
}

// Stores chunk c (64 elements) of every row, given as 16 registers, as steps 16c..16c+15.
SLUICE_AVX512_VNNI_INLINE void store_chunk(const __m512i* rows, int64_t c, QuantPanel& out) {
  __m512i steps[16];
  transpose16(rows, steps);
  for (int k = 0; k < 16; ++k) _mm512_store_si512(out.w.data() + (c * 16 + k) * 64, steps[k]);
}

// How far ahead the packing asks for each row's blocks.
constexpr int64_t kPrefetchBlocks = 2;

template <typename Block>
SLUICE_AVX512_VNNI_INLINE void prefetch_block(const Block* block) {
  const auto* bytes = reinterpret_cast<const char*>(block);
  for (size_t at = 0; at < sizeof(Block); at += 64) _mm_prefetch(bytes + at, _MM_HINT_T0);
}

// Q8_0 rows straight from their blocks.
SLUICE_AVX512_VNNI void pack_raw_q8_0(const uint8_t* rows, size_t row_bytes, QuantPanel& out) {
  RawQ8_0Rows<kQuantPanelRows> src{};
  for (int r = 0; r < out.num_rows; ++r) {
    src.blocks[r] =
        reinterpret_cast<const quant::BlockQ8_0*>(rows + static_cast<size_t>(r) * row_bytes);
  }
  src.num_blocks = out.cols / quant::kBlock32;
  for (int64_t c = 0; c < (out.cols + kQuantChunk - 1) / kQuantChunk; ++c) {
    // (Blocks of 34 bytes: a chunk's two are about one cache line; ask for the fourth chunk on.)
    for (int r = 0; r < out.num_rows; ++r) {
      if (2 * c + 9 < src.num_blocks) prefetch_block(src.blocks[r] + 2 * c + 8);
    }
    __m512i in[kQuantPanelRows];
    for (int r = 0; r < kQuantPanelRows; ++r)
      in[r] = r < out.num_rows ? src.chunk(r, c) : _mm512_setzero_si512();
    store_chunk(in, c, out);
  }
  for (int r = 0; r < out.num_rows; ++r) {
    for (int64_t b = 0; b < src.num_blocks; ++b) out.d[b * 16 + r] = src.d_block(r, b);
  }
}

// K-quant rows straight from their blocks (RawQ45KRows or RawQ6KRows of 16 rows).
template <typename Source>
SLUICE_AVX512_VNNI void pack_raw_super256(Source& src, const uint8_t* rows, size_t row_bytes,
                                          QuantPanel& out) {
  using Block = std::remove_cv_t<std::remove_pointer_t<std::remove_extent_t<decltype(src.blocks)>>>;
  for (int r = 0; r < out.num_rows; ++r) {
    src.blocks[r] = reinterpret_cast<const Block*>(rows + static_cast<size_t>(r) * row_bytes);
  }
  const int64_t groups = quant::kBlockK / out.group_elements;
  const int64_t group_stride = out.group_elements / 16;
  const int64_t num_super_blocks = out.cols / quant::kBlockK;
  for (int64_t sb = 0; sb < num_super_blocks; ++sb) {
    for (int r = 0; r < out.num_rows; ++r) {
      // Sixteen rows are sixteen streams from memory: ask for a later super-block of each.
      if (sb + kPrefetchBlocks < num_super_blocks)
        prefetch_block(src.blocks[r] + sb + kPrefetchBlocks);
      src.begin(r, sb);
      alignas(16) int8_t scales[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(scales), src.group_scales(r, sb));
      for (int64_t g = 0; g < groups; ++g)
        out.scale[(sb * groups + g) * 16 + r] = scales[g * group_stride];
      out.d[sb * 16 + r] = src.d(r, sb);
      if (!out.m.size()) continue;
      out.m[sb * 16 + r] = src.m(r, sb);
      alignas(16) int8_t mins[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(mins), src.mins(r, sb));
      for (int k = 0; k < 8; ++k) out.mins[(sb * 8 + k) * 16 + r] = min_pair(mins + 2 * k);
    }
    for (int c = 0; c < 4; ++c) {
      __m512i in[kQuantPanelRows];
      for (int r = 0; r < kQuantPanelRows; ++r) {
        in[r] = r < out.num_rows ? src.chunk(r, sb, c) : _mm512_setzero_si512();
      }
      store_chunk(in, sb * 4 + c, out);
    }
  }
}

// Rows already unpacked (any type).
SLUICE_AVX512_VNNI void pack_unpacked(const UnpackedWeights& rows, QuantPanel& out) {
  shape_panel(rows.dtype, rows.num_rows, rows.cols, out);
  for (int64_t c = 0; c < rows.w_stride / kQuantChunk; ++c) {
    __m512i in[kQuantPanelRows];
    for (int r = 0; r < kQuantPanelRows; ++r) {
      in[r] = r < rows.num_rows ? _mm512_load_si512(rows.row_w(r) + c * kQuantChunk)
                                : _mm512_setzero_si512();
    }
    store_chunk(in, c, out);
  }
  // Lanes past num_rows keep whatever they held: they are computed and never stored.
  const int64_t num_blocks = static_cast<int64_t>(out.d.size()) / kQuantPanelRows;
  const int64_t num_groups = static_cast<int64_t>(out.scale.size()) / kQuantPanelRows;
  const int64_t group_stride = out.group_elements / 16;  // scales of 16 per group
  for (int r = 0; r < rows.num_rows; ++r) {
    for (int64_t b = 0; b < num_blocks; ++b) out.d[b * 16 + r] = rows.row_d(r)[b];
    for (int64_t b = 0; b < static_cast<int64_t>(out.m.size()) / 16; ++b) {
      out.m[b * 16 + r] = rows.row_m(r)[b];
    }
    for (int64_t g = 0; g < num_groups; ++g) {
      out.scale[g * 16 + r] = rows.row_group_scale(r)[g * group_stride];
    }
    for (int64_t k = 0; k < static_cast<int64_t>(out.mins.size()) / 16; ++k) {
      out.mins[k * 16 + r] = min_pair(rows.row_mins(r) + 2 * k);
    }
  }
  add_corrections(out);
}

SLUICE_AVX512_VNNI bool pack_raw(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                                 int64_t cols, QuantPanel& out) {
  switch (dtype) {
    case DType::Q8_0:
      shape_panel(dtype, num_rows, cols, out);
      pack_raw_q8_0(rows, row_bytes, out);
      break;
    case DType::Q4_K: {
      shape_panel(dtype, num_rows, cols, out);
      RawQ45KRows<quant::BlockQ4_K, false, kQuantPanelRows> src{};
      pack_raw_super256(src, rows, row_bytes, out);
      break;
    }
    case DType::Q5_K: {
      shape_panel(dtype, num_rows, cols, out);
      RawQ45KRows<quant::BlockQ5_K, true, kQuantPanelRows> src{};
      pack_raw_super256(src, rows, row_bytes, out);
      break;
    }
    case DType::Q6_K: {
      shape_panel(dtype, num_rows, cols, out);
      RawQ6KRows<kQuantPanelRows> src{};
      pack_raw_super256(src, rows, row_bytes, out);
      break;
    }
    default:
      return false;
  }
  add_corrections(out);
  return true;
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
  avx512_panel_kernels::pack_unpacked(rows, out);
}

bool pack_quant_panel_from_blocks(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                                  int64_t cols, QuantPanel& out) {
  assert(num_rows >= 1 && num_rows <= kQuantPanelRows);
  return avx512_panel_kernels::pack_raw(dtype, rows, row_bytes, num_rows, cols, out);
}

void shape_quant_panel(DType dtype, int num_rows, int64_t cols, QuantPanel& out) {
  avx512_panel_kernels::shape_panel(dtype, num_rows, cols, out);
}

void finish_quant_panel(QuantPanel& out) {
  avx512_panel_kernels::add_corrections(out);
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
bool pack_quant_panel_from_blocks(DType, const uint8_t*, size_t, int, int64_t, QuantPanel&) {
  return false;
}
void shape_quant_panel(DType, int, int64_t, QuantPanel&) {}
void finish_quant_panel(QuantPanel&) {}
void quant_panel_tile(const QuantPanel&, const QuantizedActivations&, int64_t, int, float*,
                      int64_t) {}

#endif  // SLUICE_QUANT_X86

}  // namespace sluice
