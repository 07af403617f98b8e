// The GGUF block formats as the kernels decode them (private to kernels/): each format's block
// size and decode(block, first, out), which writes values [first, first + kGroup) of one block
// (first a multiple of kGroup, so a group never straddles a block or a sub-block), and
// visit_quant_format, the one place a runtime format id becomes a type.
//
// Bit-exactness with the CPU (engine/core/dequantize.cpp, which matches ggml): the same float
// operations in the same order, each rounded on its own. nvcc contracts a * b + c into an FMA
// by default, which rounds once, so products and sums are written with __fmul_rn / __fadd_rn /
// __fsub_rn, which it never contracts. Blocks are read byte by byte: they start at any offset
// (18, 20, 22, ... byte blocks back to back), where wider loads would be misaligned.
//
// Byte offsets: the layouts of engine/core/quant_blocks.h (ggml's block_* structs), repeated
// here because kernels/ depends on CUDA alone; the kernel tests compare every format with the
// CPU's dequantize_row bit for bit.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/dequantize.cuh"

namespace sluice::kernels::quant {

constexpr int kGroup = 8;  // values one decode writes

__device__ __forceinline__ float half_at(const uint8_t* p) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(p[0] | (p[1] << 8))));
}

__device__ __forceinline__ uint32_t u32_at(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

// Element e (0..31) of a 32-element block's 16 nibble bytes: low nibbles 0..15, high 16..31.
__device__ __forceinline__ int nibble_at(const uint8_t* qs, int e) {
  return e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4;
}

// d * q - m and d * q + m with two roundings, as ggml computes them.
__device__ __forceinline__ float scaled_minus(float d, int q, float m) {
  return __fsub_rn(__fmul_rn(d, static_cast<float>(q)), m);
}
__device__ __forceinline__ float scaled_plus(float d, int q, float m) {
  return __fadd_rn(__fmul_rn(d, static_cast<float>(q)), m);
}

// Each format: its block, and decode(block, first, out) writing values [first, first + kGroup)
// of the block (first a multiple of kGroup).

// Q8_0: d (fp16), 32 int8. x = d * q.
struct Q8_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 34;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = half_at(block);
    const auto* qs = reinterpret_cast<const int8_t*>(block + 2);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = __fmul_rn(d, static_cast<float>(qs[first + j]));
  }
};

// Q4_0: d, 16 nibble bytes. x = d * (q - 8).
struct Q4_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 18;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = half_at(block);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      out[j] = __fmul_rn(d, static_cast<float>(nibble_at(block + 2, first + j) - 8));
    }
  }
};

// Q4_1: d, m, 16 nibble bytes. x = d * q + m.
struct Q4_1 {
  static constexpr int kBlockElements = 32, kBlockBytes = 20;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = half_at(block), m = half_at(block + 2);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out[j] = scaled_plus(d, nibble_at(block + 4, first + j), m);
  }
};

// Q5_0: d, qh (bit e: the fifth bit of element e), 16 nibble bytes. x = d * (q - 16).
struct Q5_0 {
  static constexpr int kBlockElements = 32, kBlockBytes = 22;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = half_at(block);
    const uint32_t qh = u32_at(block + 2);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      const int e = first + j;
      const int q = nibble_at(block + 6, e) | static_cast<int>((qh >> e) & 1u) << 4;
      out[j] = __fmul_rn(d, static_cast<float>(q - 16));
    }
  }
};

// Q5_1: d, m, qh, 16 nibble bytes. x = d * q + m.
struct Q5_1 {
  static constexpr int kBlockElements = 32, kBlockBytes = 24;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = half_at(block), m = half_at(block + 2);
    const uint32_t qh = u32_at(block + 4);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      const int e = first + j;
      out[j] = scaled_plus(d, nibble_at(block + 8, e) | static_cast<int>((qh >> e) & 1u) << 4, m);
    }
  }
};

// MXFP4: e (E8M0 exponent), 16 nibble bytes. x = kMxfp4Values[q] * 2^(e - 128), the scale as
// ggml's GGML_E8M0_TO_FP32_HALF (subnormal 2^-128 and 2^-127 for e = 0 and 1) and the nibble
// indexing the doubled FP4 E2M1 values.
struct MXFP4 {
  static constexpr int kBlockElements = 32, kBlockBytes = 17;
  __device__ static float scale(uint8_t e) {
    return __uint_as_float(e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23);
  }
  __device__ static int value(int q) {
    // The 16 values as 4-bit magnitudes' table {0, 1, 2, 3, 4, 6, 8, 12} with bit 3 the sign.
    const int magnitude = (0xC8643210u >> (4 * (q & 7))) & 0xF;
    return q & 8 ? -magnitude : magnitude;
  }
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const float d = scale(block[0]);
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      out[j] = __fmul_rn(static_cast<float>(value(nibble_at(block + 1, first + j))), d);
    }
  }
};

// The 2-bit field of element e of a Q2_K/Q3_K super-block's 64 qs bytes: half e / 128, shift
// 2 ((e % 128) / 32), lane e % 32.
__device__ __forceinline__ int two_bits_at(const uint8_t* qs, int e) {
  return (qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Q2_K: 16 scale bytes (low nibble scale, high nibble min per 16 values), 64 qs, d, dmin.
// x = (d * scale) * q - dmin * min.
struct Q2_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 84;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const uint8_t scale_byte = block[first / 16];
    const float dl = __fmul_rn(half_at(block + 80), static_cast<float>(scale_byte & 0xF));
    const float ml = __fmul_rn(half_at(block + 82), static_cast<float>(scale_byte >> 4));
#pragma unroll
    for (int j = 0; j < kGroup; ++j)
      out[j] = scaled_minus(dl, two_bits_at(block + 16, first + j), ml);
  }
};

// Q3_K: 32 hmask bytes (bit e / 32 of byte e % 32: the third bit, set means no -4), 64 qs,
// 12 bytes of 6-bit signed scales (offset 32) per 16 values, d. x = (d * scale) * q.
struct Q3_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 110;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const uint8_t* scales = block + 96;
    const int sub = first / 16;
    const int low = sub < 8 ? scales[sub] & 0x0F : scales[sub - 8] >> 4;
    const int high = (scales[8 + sub % 4] >> (2 * (sub / 4))) & 0x03;
    const float dl = __fmul_rn(half_at(block + 108), static_cast<float>((low | high << 4) - 32));
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      const int e = first + j;
      const int q = two_bits_at(block + 32, e) - ((block[e % 32] >> (e / 32)) & 1 ? 0 : 4);
      out[j] = __fmul_rn(dl, static_cast<float>(q));
    }
  }
};

// The 6-bit scale and min of sub-block sub (0..7) of the 12 scale bytes of Q4_K/Q5_K.
__device__ __forceinline__ void scale_min_at(const uint8_t* scales, int sub, int& scale, int& min) {
  if (sub < 4) {
    scale = scales[sub] & 0x3F;
    min = scales[sub + 4] & 0x3F;
  } else {
    scale = (scales[sub + 4] & 0x0F) | ((scales[sub - 4] >> 6) << 4);
    min = (scales[sub + 4] >> 4) | ((scales[sub] >> 6) << 4);
  }
}

// Q4_K and Q5_K: d, dmin, 12 scale bytes, [Q5_K: 32 qh bytes,] 128 qs bytes; sub-block s of 32
// takes nibble s % 2 of qs[32 (s / 2) + l] (and bit s of qh[l]). x = (d * scale) * q - dmin * min.
template <int kQhOffset, int kQsOffset>
__device__ __forceinline__ void decode_k4(const uint8_t* block, int first, float (&out)[kGroup]) {
  const int sub = first / 32;
  int scale, min;
  scale_min_at(block + 4, sub, scale, min);
  const float d1 = __fmul_rn(half_at(block), static_cast<float>(scale));
  const float m1 = __fmul_rn(half_at(block + 2), static_cast<float>(min));
#pragma unroll
  for (int j = 0; j < kGroup; ++j) {
    const int l = (first + j) % 32;
    int q = (block[kQsOffset + 32 * (sub / 2) + l] >> (4 * (sub % 2))) & 0xF;
    if constexpr (kQhOffset >= 0) q |= ((block[kQhOffset + l] >> sub) & 1) << 4;
    out[j] = scaled_minus(d1, q, m1);
  }
}

struct Q4_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 144;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    decode_k4<-1, 16>(block, first, out);
  }
};

struct Q5_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 176;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    decode_k4<16, 48>(block, first, out);
  }
};

// Q6_K: 128 ql bytes (low nibbles), 64 qh bytes (2 high bits), 16 int8 scales, d. Element e in
// half h = e / 128 at r = e % 128: nibble r / 64 of ql[64h + r % 64], bits 2 (r / 32) of
// qh[32h + r % 32]. x = (d * scale) * (q - 32).
struct Q6_K {
  static constexpr int kBlockElements = 256, kBlockBytes = 210;
  __device__ static void decode(const uint8_t* block, int first, float (&out)[kGroup]) {
    const auto scale = static_cast<int8_t>(block[192 + first / 16]);
    const float dl = __fmul_rn(half_at(block + 208), static_cast<float>(scale));
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      const int e = first + j, half = e / 128, r = e % 128;
      const int low = (block[64 * half + r % 64] >> (4 * (r / 64))) & 0xF;
      const int high = (block[128 + 32 * half + r % 32] >> (2 * (r / 32))) & 3;
      out[j] = __fmul_rn(dl, static_cast<float>((low | high << 4) - 32));
    }
  }
};

// Calls fn(Format{}) for the block format of `format`; returns false (calling nothing) for an id
// that is not a block format.
template <typename Fn>
bool visit_quant_format(QuantFormat format, Fn&& fn) {
  switch (format) {
    case QuantFormat::Q8_0:
      fn(Q8_0{});
      return true;
    case QuantFormat::Q4_0:
      fn(Q4_0{});
      return true;
    case QuantFormat::Q4_1:
      fn(Q4_1{});
      return true;
    case QuantFormat::Q5_0:
      fn(Q5_0{});
      return true;
    case QuantFormat::Q5_1:
      fn(Q5_1{});
      return true;
    case QuantFormat::Q2_K:
      fn(Q2_K{});
      return true;
    case QuantFormat::Q3_K:
      fn(Q3_K{});
      return true;
    case QuantFormat::Q4_K:
      fn(Q4_K{});
      return true;
    case QuantFormat::Q5_K:
      fn(Q5_K{});
      return true;
    case QuantFormat::Q6_K:
      fn(Q6_K{});
      return true;
    case QuantFormat::MXFP4:
      fn(MXFP4{});
      return true;
    default:
      return false;
  }
}

}  // namespace sluice::kernels::quant
