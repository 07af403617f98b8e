// The block formats of the integer products (quant_gemv_int8.cuh's GEMV, quant_mmq.cuh's tiles):
// each format unpacks one 32-value block of a weight row into eight words of four signed bytes, in
// value order, and says how the two 16-value halves' integer sums become floats:
// dx * (d_lo * sum_lo + d_hi * sum_hi) + m * dx * sum(qx). Private to those kernels' .cu files.
//
// Loads: a block's bytes are read with the widest loads its offset allows. Rows lie back to back
// from 256-byte aligned storage, so a block's start is aligned to the largest power of two that
// divides its size (18 bytes: 2; 20: 4; 144: 16; 17: 1). The emulator checks every aligned load.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "kernels/dequantize.cuh"
#include "kernels/quant_formats.cuh"

namespace sluice::kernels::int8_formats {

template <typename U>
__device__ __forceinline__ U load_aligned(const uint8_t* p) {
#ifdef SLUICE_KERNEL_EMULATOR
  if (reinterpret_cast<uintptr_t>(p) % sizeof(U) != 0) {
    std::fprintf(stderr, "the int8 products: a %zu-byte load from a misaligned address\n",
                 sizeof(U));
    std::abort();
  }
#endif
  return *reinterpret_cast<const U*>(p);
}

// Four bytes at a 2-byte aligned address.
__device__ __forceinline__ uint32_t load_u32_2(const uint8_t* p) {
  return static_cast<uint32_t>(load_aligned<uint16_t>(p)) |
         static_cast<uint32_t>(load_aligned<uint16_t>(p + 2)) << 16;
}

// Four bytes at any address.
__device__ __forceinline__ uint32_t load_u32_1(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

__device__ __forceinline__ float half_bits(uint32_t bits) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(bits & 0xFFFFu)));
}

// Four bits (bit 0 first) spread to bit 4 of each byte: the fifth bit of four values.
__device__ __forceinline__ uint32_t fifth_bits(uint32_t four) {
  return (four & 1u) << 4 | (four & 2u) << 11 | (four & 4u) << 18 | (four & 8u) << 25;
}

constexpr uint32_t kLowNibbles = 0x0F0F0F0Fu;

struct Unpacked {
  int q[8];  // values 4i..4i+3 in q[i], signed bytes
  float d_lo = 0.0f, d_hi = 0.0f;
  float m = 0.0f;  // the factor of dx * sum(qx), for formats with a min
};

// 16 nibble bytes (w[0..3]) as values 0-15 (low nibbles) and 16-31 (high), minus offset.
__device__ __forceinline__ void unpack_nibbles(const uint32_t (&w)[4], uint32_t offset,
                                               Unpacked& u) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    u.q[i] = static_cast<int>(__vsub4(w[i] & kLowNibbles, offset));
    u.q[4 + i] = static_cast<int>(__vsub4((w[i] >> 4) & kLowNibbles, offset));
  }
}

// Each format: kBlocks (32-value blocks per stored block), kBytes (its size) and unpack(block,
// sub, u) for 32-value block `sub` of the stored block.

struct Q8_0 {
  static constexpr int kBlocks = 1, kBytes = 34;
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    u.d_lo = u.d_hi = half_bits(load_aligned<uint16_t>(block));
#pragma unroll
    for (int i = 0; i < 8; ++i) u.q[i] = static_cast<int>(load_u32_2(block + 2 + 4 * i));
  }
};

struct Q4_0 {
  static constexpr int kBlocks = 1, kBytes = 18;
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    u.d_lo = u.d_hi = half_bits(load_aligned<uint16_t>(block));
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = load_u32_2(block + 2 + 4 * i);
    unpack_nibbles(w, 0x08080808u, u);
  }
};

struct Q4_1 {
  static constexpr int kBlocks = 1, kBytes = 20;
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    const uint32_t dm = load_aligned<uint32_t>(block);
    u.d_lo = u.d_hi = half_bits(dm);
    u.m = half_bits(dm >> 16);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = load_aligned<uint32_t>(block + 4 + 4 * i);
    unpack_nibbles(w, 0, u);
  }
};

// Q5_0 and Q5_1: the nibbles plus qh's bit e as value e's fifth bit.
__device__ __forceinline__ void unpack_five_bits(const uint32_t (&w)[4], uint32_t qh,
                                                 uint32_t offset, Unpacked& u) {
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    u.q[i] = static_cast<int>(__vsub4((w[i] & kLowNibbles) | fifth_bits(qh >> (4 * i)), offset));
    u.q[4 + i] = static_cast<int>(
        __vsub4(((w[i] >> 4) & kLowNibbles) | fifth_bits(qh >> (16 + 4 * i)), offset));
  }
}

struct Q5_0 {
  static constexpr int kBlocks = 1, kBytes = 22;
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    u.d_lo = u.d_hi = half_bits(load_aligned<uint16_t>(block));
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = load_u32_2(block + 6 + 4 * i);
    unpack_five_bits(w, load_u32_2(block + 2), 0x10101010u, u);
  }
};

struct Q5_1 {
  static constexpr int kBlocks = 1, kBytes = 24;
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    const uint32_t dm = load_aligned<uint32_t>(block);
    u.d_lo = u.d_hi = half_bits(dm);
    u.m = half_bits(dm >> 16);
    uint32_t w[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) w[i] = load_aligned<uint32_t>(block + 8 + 4 * i);
    unpack_five_bits(w, load_aligned<uint32_t>(block + 4), 0, u);
  }
};

struct MXFP4 {
  static constexpr int kBlocks = 1, kBytes = 17;
  // Four nibbles (in the low nibbles of w's bytes) as the doubled FP4 values, signed bytes.
  __device__ static int values(uint32_t w) {
    uint32_t out = 0;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const int v = quant::MXFP4::value(static_cast<int>((w >> (8 * j)) & 0xFu));
      out |= (static_cast<uint32_t>(v) & 0xFFu) << (8 * j);
    }
    return static_cast<int>(out);
  }
  __device__ static void unpack(const uint8_t* block, int, Unpacked& u) {
    u.d_lo = u.d_hi = quant::MXFP4::scale(block[0]);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const uint32_t w = load_u32_1(block + 1 + 4 * i);
      u.q[i] = values(w & kLowNibbles);
      u.q[4 + i] = values((w >> 4) & kLowNibbles);
    }
  }
};

// Q4_K and Q5_K: 8 blocks of 32 per super-block, each with a 6-bit scale and min.
__device__ __forceinline__ void k_scale_min(const uint8_t* scales, int sub, float d, float dmin,
                                            Unpacked& u) {
  int scale = 0, min = 0;
  quant::scale_min_at(scales, sub, scale, min);
  u.d_lo = u.d_hi = d * static_cast<float>(scale);
  u.m = -(dmin * static_cast<float>(min));
}

struct Q4_K {
  static constexpr int kBlocks = 8, kBytes = 144;
  __device__ static void unpack(const uint8_t* block, int sub, Unpacked& u) {
    const uint32_t dm = load_aligned<uint32_t>(block);
    k_scale_min(block + 4, sub, half_bits(dm), half_bits(dm >> 16), u);
    // Blocks 2j and 2j + 1 share qs[32j, 32j + 32): the low and the high nibbles.
    const uint8_t* qs = block + 16 + 32 * (sub / 2);
    const int shift = 4 * (sub % 2);
    const uint4 a = load_aligned<uint4>(qs), b = load_aligned<uint4>(qs + 16);
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) u.q[i] = static_cast<int>((w[i] >> shift) & kLowNibbles);
  }
};

struct Q5_K {
  static constexpr int kBlocks = 8, kBytes = 176;
  __device__ static void unpack(const uint8_t* block, int sub, Unpacked& u) {
    const uint32_t dm = load_aligned<uint32_t>(block);
    k_scale_min(block + 4, sub, half_bits(dm), half_bits(dm >> 16), u);
    const uint8_t* qs = block + 48 + 32 * (sub / 2);
    const int shift = 4 * (sub % 2);
    const uint4 a = load_aligned<uint4>(qs), b = load_aligned<uint4>(qs + 16);
    const uint4 ha = load_aligned<uint4>(block + 16), hb = load_aligned<uint4>(block + 32);
    const uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
    const uint32_t h[8] = {ha.x, ha.y, ha.z, ha.w, hb.x, hb.y, hb.z, hb.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      u.q[i] =
          static_cast<int>(((w[i] >> shift) & kLowNibbles) | ((h[i] >> sub) & 0x01010101u) << 4);
    }
  }
};

// Q6_K: ql[128], qh[64], 16 int8 scales (one per 16 values), d. Block sub (0-7) of a super-block:
// half h = sub / 4 and part p = sub % 4 of it: low (p < 2) or high nibbles of ql[64h + 32(p & 1)
// + l], bits 2p, 2p + 1 of qh[32h + l], scales 8h + 2p (values 0-15) and 8h + 2p + 1 (16-31).
struct Q6_K {
  static constexpr int kBlocks = 8, kBytes = 210;
  __device__ static void unpack(const uint8_t* block, int sub, Unpacked& u) {
    const int h = sub / 4, p = sub % 4;
    const float d = half_bits(load_aligned<uint16_t>(block + 208));
    const auto* scales = reinterpret_cast<const int8_t*>(block + 192);
    u.d_lo = d * static_cast<float>(scales[8 * h + 2 * p]);
    u.d_hi = d * static_cast<float>(scales[8 * h + 2 * p + 1]);
    const uint8_t* ql = block + 64 * h + 32 * (p & 1);
    const uint8_t* qh = block + 128 + 32 * h;
    const int shift = 4 * (p >> 1);
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const uint32_t lo = (load_u32_2(ql + 4 * i) >> shift) & kLowNibbles;
      const uint32_t hi = ((load_u32_2(qh + 4 * i) >> (2 * p)) & 0x03030303u) << 4;
      u.q[i] = static_cast<int>(__vsub4(lo | hi, 0x20202020u));
    }
  }
};

// Whether a row of cols values in Format is whole stored blocks of row_bytes bytes in all.
template <typename Format>
bool is_whole_blocks(int cols, size_t row_bytes) {
  constexpr int kValues = 32 * Format::kBlocks;
  return cols % kValues == 0 && row_bytes == static_cast<size_t>(cols / kValues) * Format::kBytes;
}

template <typename Fn>
bool visit_int8_format(QuantFormat format, Fn&& fn) {
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

}  // namespace sluice::kernels::int8_formats
