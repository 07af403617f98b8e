// Decoding sixteen staged values of a weight row at once (private to the tile kernels,
// kernels/quant_tile_staging.cuh): the floats quant_formats.cuh's decode gives, bit for bit.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/quant_formats.cuh"

namespace sluice::kernels::tile_mma {

using detail::from_float;
using detail::Vec;
using quant::kGroup;

// decode16<Format>(row, e, out): values [e, e + 16) of a staged row (e a multiple of 16), the
// floats Format::decode gives, bit for bit. Q4_K, Q6_K and Q8_0 (the formats of Q4_K_M and Q8_0
// files) read sixteen quants in a few word loads and make each a float with a byte permutation
// and one exact subtraction (2^23 + q as a float's bits, minus 2^23 + its offset), where decode
// spends a byte load, masks and a conversion per value; their block header is read once for the
// sixteen. The others decode two groups of 8. A staged block is 2-byte aligned (Q4_K's 16).

inline constexpr int kUnit = 16;

// Byte k of w (0..255) minus `offset`, exactly: bias = 2^23 + offset.
template <int k>
__device__ __forceinline__ float byte_minus(uint32_t w, float bias) {
  return __int_as_float(static_cast<int>(__byte_perm(w, 0x4B000000u, 0x7540u + k))) - bias;
}

// Four bytes from two aligned halves.
__device__ __forceinline__ uint32_t word_at(const uint8_t* p) {
  const auto* h = reinterpret_cast<const uint16_t*>(p);
  return static_cast<uint32_t>(h[0]) | static_cast<uint32_t>(h[1]) << 16;
}

// out[4 i + k] = scale(byte k of words[i] minus offset) for the sixteen bytes of four words.
template <typename Scale>
__device__ __forceinline__ void bytes_to_floats(const uint32_t (&words)[4], float offset,
                                                Scale&& scale, float (&out)[kUnit]) {
  const float bias = 8388608.0f + offset;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[4 * i + 0] = scale(byte_minus<0>(words[i], bias));
    out[4 * i + 1] = scale(byte_minus<1>(words[i], bias));
    out[4 * i + 2] = scale(byte_minus<2>(words[i], bias));
    out[4 * i + 3] = scale(byte_minus<3>(words[i], bias));
  }
}

// Q4_K: x = (d * scale) * q - dmin * min, q the nibble sub % 2 of qs[32 (sub / 2) + l].
__device__ __forceinline__ void decode16_q4_k(const uint8_t* block, int first,
                                              float (&out)[kUnit]) {
  const int sub = first / 32;
  int scale, min;
  quant::scale_min_at(block + 4, sub, scale, min);
  const float d1 = __fmul_rn(quant::half_at(block), static_cast<float>(scale));
  const float m1 = __fmul_rn(quant::half_at(block + 2), static_cast<float>(min));
  const uint4 q = *reinterpret_cast<const uint4*>(block + 16 + 32 * (sub / 2) + first % 32);
  const int shift = 4 * (sub % 2);
  const uint32_t words[4] = {(q.x >> shift) & 0x0F0F0F0Fu, (q.y >> shift) & 0x0F0F0F0Fu,
                             (q.z >> shift) & 0x0F0F0F0Fu, (q.w >> shift) & 0x0F0F0F0Fu};
  bytes_to_floats(
      words, 0.0f, [&](float v) { return __fsub_rn(__fmul_rn(d1, v), m1); }, out);
}

// Q6_K: x = (d * scale) * (q - 32), q = low nibble | 2 high bits << 4; one scale per 16 values.
__device__ __forceinline__ void decode16_q6_k(const uint8_t* block, int first,
                                              float (&out)[kUnit]) {
  const int half = first / 128, r = first % 128;
  const auto scale = static_cast<int8_t>(block[192 + first / 16]);
  const float dl = __fmul_rn(quant::half_at(block + 208), static_cast<float>(scale));
  const uint8_t* ql = block + 64 * half + r % 64;
  const uint8_t* qh = block + 128 + 32 * half + r % 32;
  const int low_shift = 4 * (r / 64), high_shift = 2 * (r / 32);
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    words[i] = ((word_at(ql + 4 * i) >> low_shift) & 0x0F0F0F0Fu) |
               ((word_at(qh + 4 * i) >> high_shift) & 0x03030303u) << 4;
  }
  bytes_to_floats(
      words, 32.0f, [&](float v) { return __fmul_rn(dl, v); }, out);
}

// Q8_0: x = d * q, q a signed byte (made unsigned by flipping its top bit, then less 128).
__device__ __forceinline__ void decode16_q8_0(const uint8_t* block, int first,
                                              float (&out)[kUnit]) {
  const float d = quant::half_at(block);
  const uint8_t* qs = block + 2 + first;
  uint32_t words[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) words[i] = word_at(qs + 4 * i) ^ 0x80808080u;
  bytes_to_floats(
      words, 128.0f, [&](float v) { return __fmul_rn(d, v); }, out);
}

template <typename Format>
__device__ __forceinline__ void decode16(const uint8_t* row, int e, float (&out)[kUnit]) {
  const uint8_t* block = row + (e / Format::kBlockElements) * Format::kBlockBytes;
  const int first = e % Format::kBlockElements;
  if constexpr (std::is_same_v<Format, quant::Q4_K>) {
    decode16_q4_k(block, first, out);
  } else if constexpr (std::is_same_v<Format, quant::Q6_K>) {
    decode16_q6_k(block, first, out);
  } else if constexpr (std::is_same_v<Format, quant::Q8_0>) {
    decode16_q8_0(block, first, out);
  } else {
    float a[kGroup], b[kGroup];
    Format::decode(block, first, a);
    const int next = e + kGroup;
    Format::decode(row + (next / Format::kBlockElements) * Format::kBlockBytes,
                   next % Format::kBlockElements, b);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = a[j], out[kGroup + j] = b[j];
  }
}

// Rounds sixteen floats to T into ws.
template <typename T>
__device__ __forceinline__ void store16(const float (&v)[kUnit], T* dst) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    Vec<T, kGroup> packed;
#pragma unroll
    for (int j = 0; j < kGroup; ++j) packed.values[j] = from_float<T>(v[kGroup * h + j]);
    *reinterpret_cast<Vec<T, kGroup>*>(dst + kGroup * h) = packed;
  }
}

}  // namespace sluice::kernels::tile_mma
