// Sixteen-float vectors for the fixed-order matrix kernels (cpu_gemm_tiles.inc), one struct per
// instruction set: AVX-512 (x86-64-v4), AVX2 + FMA + F16C (x86-64-v3) and portable C++. Each
// offers the same operations with the same results lane by lane:
//   load(p)            16 values from p: floats, or F16 / BF16 weights widened in registers
//                      (exact, so a 16-bit weight multiplies exactly as its fp32 value)
//   load_part(p, n)    the first n < 16 values, zeros in the other lanes
//   fma(a, b, acc)     acc + a * b lane by lane; one rounding on AVX2 and AVX-512, a product
//                      and a sum (two roundings) in the portable struct
//   reduce(acc, out)   out[i] = the sum of acc[i]'s lanes in one fixed tree: lanes l and l + 8
//                      added, then l and l + 4, l and l + 2, l and l + 1
// AVX2 and AVX-512 therefore give the same bits; the portable struct (a CPU without FMA, or a
// compiler without GCC's target pragmas) rounds the products separately. kGroup is the number of
// sums reduce() takes at once (what fits in the registers), kTileTokens the tokens of a full tile.
//
// Each struct is compiled for its instruction set with GCC's target pragma; the kernels that use
// it are included inside the same region (cpu_gemm.cpp), so nothing of a wider instruction set
// is ever inlined into code a narrower CPU may run.
#pragma once

#include <cstdint>
#include <cstring>

#include "engine/core/dtype.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SLUICE_HAS_X86_SIMD16 1
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_ps() (a self-initialised variable),
// which -Wmaybe-uninitialized reports wherever they are inlined; the report is about the header.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#define SLUICE_HAS_X86_SIMD16 0
#endif

#define SLUICE_SIMD_INLINE inline __attribute__((always_inline))

namespace sluice {

// 16-bit weight elements, as distinct types so that loads pick the widening by overload.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

namespace simd16_portable {

struct Simd16 {
  static constexpr int kGroup = 4;
  static constexpr int kTileTokens = 2;
  using F = float __attribute__((vector_size(64)));

  static SLUICE_SIMD_INLINE F zero() { return F{}; }
  static SLUICE_SIMD_INLINE F load(const float* p) {
    F v;
    std::memcpy(&v, p, sizeof v);
    return v;
  }
  static SLUICE_SIMD_INLINE F load_part(const float* p, int n) {
    F v = {};
    std::memcpy(&v, p, static_cast<size_t>(n) * sizeof(float));
    return v;
  }
  static SLUICE_SIMD_INLINE F load(const Half* p) { return load_part(p, 16); }
  static SLUICE_SIMD_INLINE F load_part(const Half* p, int n) {
    F v = {};
    for (int i = 0; i < n; ++i) v[i] = half_to_float(p[i].bits);
    return v;
  }
  static SLUICE_SIMD_INLINE F load(const BFloat16* p) { return load_part(p, 16); }
  static SLUICE_SIMD_INLINE F load_part(const BFloat16* p, int n) {
    F v = {};
    for (int i = 0; i < n; ++i) {
      const uint32_t bits = static_cast<uint32_t>(p[i].bits) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      v[i] = f;
    }
    return v;
  }
  static SLUICE_SIMD_INLINE F fma(F a, F b, F acc) { return acc + a * b; }

  static SLUICE_SIMD_INLINE void reduce(const F (&acc)[kGroup], float* out) {
    for (int i = 0; i < kGroup; ++i) {
      float lanes[16];
      std::memcpy(lanes, &acc[i], sizeof lanes);
      for (int width = 8; width >= 1; width /= 2) {
        for (int l = 0; l < width; ++l) lanes[l] = lanes[l] + lanes[l + width];
      }
      out[i] = lanes[0];
    }
  }
};

}  // namespace simd16_portable

#if SLUICE_HAS_X86_SIMD16

#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace simd16_avx2 {

// Lanes 0-7 in lo, 8-15 in hi. Four sums at a time: sixteen accumulators would need all 16
// ymm registers twice over.
struct Simd16 {
  static constexpr int kGroup = 4;
  static constexpr int kTileTokens = 2;
  struct F {
    __m256 lo, hi;
  };

  static SLUICE_SIMD_INLINE F zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static SLUICE_SIMD_INLINE F load(const float* p) {
    return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
  }
  static SLUICE_SIMD_INLINE F load_part(const float* p, int n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i lo_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lane);
    const __m256i hi_mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(n - 8), lane);
    return {_mm256_maskload_ps(p, lo_mask), _mm256_maskload_ps(p + 8, hi_mask)};
  }
  static SLUICE_SIMD_INLINE F load(const Half* p) {
    return {_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  static SLUICE_SIMD_INLINE F load(const BFloat16* p) {
    return {widen_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
            widen_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 8)))};
  }
  // No 16-bit masked load below AVX-512: the tail goes through a zeroed copy.
  template <typename T>
  static SLUICE_SIMD_INLINE F load_part(const T* p, int n) {
    T padded[16] = {};
    std::memcpy(padded, p, static_cast<size_t>(n) * sizeof(T));
    return load(padded);
  }
  static SLUICE_SIMD_INLINE F fma(F a, F b, F acc) {
    return {_mm256_fmadd_ps(a.lo, b.lo, acc.lo), _mm256_fmadd_ps(a.hi, b.hi, acc.hi)};
  }

  static SLUICE_SIMD_INLINE void reduce(const F (&acc)[kGroup], float* out) {
    __m256 s[4];  // lanes l + (l + 8)
    for (int i = 0; i < 4; ++i) s[i] = _mm256_add_ps(acc[i].lo, acc[i].hi);
    // [s0 | s1] and [s2 | s3], lanes l + (l + 4)
    const __m256 c0 = _mm256_add_ps(_mm256_permute2f128_ps(s[0], s[1], 0x20),
                                    _mm256_permute2f128_ps(s[0], s[1], 0x31));
    const __m256 c1 = _mm256_add_ps(_mm256_permute2f128_ps(s[2], s[3], 0x20),
                                    _mm256_permute2f128_ps(s[2], s[3], 0x31));
    // lanes l + (l + 2): [acc0 acc0 acc2 acc2 | acc1 acc1 acc3 acc3]
    const __m256 d = _mm256_add_ps(
        _mm256_castpd_ps(_mm256_unpacklo_pd(_mm256_castps_pd(c0), _mm256_castps_pd(c1))),
        _mm256_castpd_ps(_mm256_unpackhi_pd(_mm256_castps_pd(c0), _mm256_castps_pd(c1))));
    // lanes l + (l + 1): [acc0 acc2 acc0 acc2 | acc1 acc3 acc1 acc3]
    const __m256 e = _mm256_add_ps(_mm256_shuffle_ps(d, d, 0x88), _mm256_shuffle_ps(d, d, 0xdd));
    const __m256 ordered = _mm256_permutevar8x32_ps(e, _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
    _mm_storeu_ps(out, _mm256_castps256_ps128(ordered));
  }

 private:
  static SLUICE_SIMD_INLINE __m256 widen_bf16(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
};

}  // namespace simd16_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace simd16_avx512 {

struct Simd16 {
  static constexpr int kGroup = 16;
  static constexpr int kTileTokens = 4;
  using F = __m512;

  static SLUICE_SIMD_INLINE F zero() { return _mm512_setzero_ps(); }
  static SLUICE_SIMD_INLINE F load(const float* p) { return _mm512_loadu_ps(p); }
  static SLUICE_SIMD_INLINE F load_part(const float* p, int n) {
    return _mm512_maskz_loadu_ps(first_lanes(n), p);
  }
  static SLUICE_SIMD_INLINE F load(const Half* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static SLUICE_SIMD_INLINE F load_part(const Half* p, int n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(first_lanes(n), p));
  }
  static SLUICE_SIMD_INLINE F load(const BFloat16* p) {
    return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static SLUICE_SIMD_INLINE F load_part(const BFloat16* p, int n) {
    return widen_bf16(_mm256_maskz_loadu_epi16(first_lanes(n), p));
  }
  static SLUICE_SIMD_INLINE F fma(F a, F b, F acc) { return _mm512_fmadd_ps(a, b, acc); }

  // Sixteen sums transposed into one vector in four levels of shuffle + add (45 instructions
  // instead of sixteen scalar trees). Slot i of the network takes acc[4 (i % 4) + i / 4], so that
  // the last level leaves out[] in order.
  static SLUICE_SIMD_INLINE void reduce(const F (&acc)[kGroup], float* out) {
    F a[16];
    for (int i = 0; i < 16; ++i) a[i] = acc[4 * (i % 4) + i / 4];
    F b[8];  // b[i]: lanes l + (l + 8) of a[2i] (128-bit quarters 0-1) and a[2i + 1] (2-3)
    for (int i = 0; i < 8; ++i) {
      b[i] = _mm512_add_ps(_mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0x44),
                           _mm512_shuffle_f32x4(a[2 * i], a[2 * i + 1], 0xee));
    }
    F c[4];  // c[i]: quarter j holds lanes l + (l + 4) of a[4i + j]
    for (int i = 0; i < 4; ++i) {
      c[i] = _mm512_add_ps(_mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0x88),
                           _mm512_shuffle_f32x4(b[2 * i], b[2 * i + 1], 0xdd));
    }
    F d[2];  // d[i]: quarter j holds lanes l + (l + 2) of a[8i + j] and of a[8i + 4 + j]
    for (int i = 0; i < 2; ++i) {
      const __m512d lo = _mm512_castps_pd(c[2 * i]), hi = _mm512_castps_pd(c[2 * i + 1]);
      d[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(lo, hi)),
                           _mm512_castpd_ps(_mm512_unpackhi_pd(lo, hi)));
    }
    // quarter j: the sums of a[j], a[4 + j], a[8 + j], a[12 + j], i.e. element 4j + q holds
    // a[4q + j] = acc[4j + q]
    const F e =
        _mm512_add_ps(_mm512_shuffle_ps(d[0], d[1], 0x88), _mm512_shuffle_ps(d[0], d[1], 0xdd));
    _mm512_storeu_ps(out, e);
  }

 private:
  static SLUICE_SIMD_INLINE __mmask16 first_lanes(int n) {
    return static_cast<__mmask16>((1u << n) - 1u);
  }
  static SLUICE_SIMD_INLINE F widen_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
};

}  // namespace simd16_avx512
#pragma GCC pop_options

#endif  // SLUICE_HAS_X86_SIMD16

}  // namespace sluice
