// The CPU kernel emulator's stand-in for <mma.h>: the WMMA fragments and their warp-wide
// operations for 16 x 16 x 16 tiles of fp16/bf16 with fp32 accumulation.
//
// A fragment's distribution over the lanes is unspecified by CUDA (a kernel may only load, store,
// fill and multiply it), so each emulated lane holds the whole tile and does the whole operation
// itself: no lane needs another's values and no barrier is needed. Products of 16-bit values are
// exact in fp32 and each output sums its 16 products in k order, one rounding per addition (the
// tensor cores' order and internal precision differ; tests compare with a tolerance).
#pragma once

#include <type_traits>

#include "cuda_bf16.h"
#include "cuda_fp16.h"

namespace nvcuda::wmma {

struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

namespace detail {

inline float widen(float x) {
  return x;
}
inline float widen(__half x) {
  return __half2float(x);
}
inline float widen(__nv_bfloat16 x) {
  return __bfloat162float(x);
}

// The tile's shape: rows x cols of the operand (A: M x K, B: K x N, C: M x N).
template <typename Use, int M, int N, int K>
struct Shape;
template <int M, int N, int K>
struct Shape<matrix_a, M, N, K> {
  static constexpr int kRows = M, kCols = K;
};
template <int M, int N, int K>
struct Shape<matrix_b, M, N, K> {
  static constexpr int kRows = K, kCols = N;
};
template <int M, int N, int K>
struct Shape<accumulator, M, N, K> {
  static constexpr int kRows = M, kCols = N;
};

}  // namespace detail

template <typename Use, int M, int N, int K, typename T, typename Layout = void>
struct fragment {
  static_assert(M == 16 && N == 16 && K == 16, "the emulator has the 16 x 16 x 16 shape only");
  static constexpr int kRows = detail::Shape<Use, M, N, K>::kRows;
  static constexpr int kCols = detail::Shape<Use, M, N, K>::kCols;
  static constexpr int num_elements = kRows * kCols;
  float x[num_elements];  // row-major, widened (exact for the 16-bit types)
};

template <typename Use, int M, int N, int K, typename T, typename Layout>
void fill_fragment(fragment<Use, M, N, K, T, Layout>& f, float value) {
  for (float& v : f.x) v = value;
}

// A or B from memory in the fragment's own layout; ldm in elements.
template <typename Use, int M, int N, int K, typename T, typename Layout>
void load_matrix_sync(fragment<Use, M, N, K, T, Layout>& f, const T* p, unsigned ldm) {
  using F = fragment<Use, M, N, K, T, Layout>;
  for (int r = 0; r < F::kRows; ++r)
    for (int c = 0; c < F::kCols; ++c) {
      const T value = std::is_same_v<Layout, row_major> ? p[r * ldm + c] : p[c * ldm + r];
      f.x[r * F::kCols + c] = detail::widen(value);
    }
}

template <int M, int N, int K>
void store_matrix_sync(float* p, const fragment<accumulator, M, N, K, float>& f, unsigned ldm,
                       layout_t layout) {
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c)
      (layout == mem_row_major ? p[r * ldm + c] : p[c * ldm + r]) = f.x[r * N + c];
}

// d = a · b + c.
template <int M, int N, int K, typename T, typename LayoutA, typename LayoutB>
void mma_sync(fragment<accumulator, M, N, K, float>& d,
              const fragment<matrix_a, M, N, K, T, LayoutA>& a,
              const fragment<matrix_b, M, N, K, T, LayoutB>& b,
              const fragment<accumulator, M, N, K, float>& c) {
  float out[M * N];
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float s = c.x[i * N + j];
      for (int k = 0; k < K; ++k) s += a.x[i * K + k] * b.x[k * N + j];
      out[i * N + j] = s;
    }
  for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}

}  // namespace nvcuda::wmma
