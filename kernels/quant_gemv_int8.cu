// The integer GEMV of quant_gemv_int8.cuh. Each format unpacks one 32-value block of a weight row
// into eight words of four signed bytes, in value order, and says how the two 16-value halves'
// integer sums become floats: dx * (d_lo * sum_lo + d_hi * sum_hi) + m * dx * sum(qx).
//
// Loads: a block's bytes are read with the widest loads its offset allows. Rows lie back to back
// from 256-byte aligned storage, so a block's start is aligned to the largest power of two that
// divides its size (18 bytes: 2; 20: 4; 144: 16; 17: 1). The emulator checks every aligned load.
#include "kernels/quant_gemv_int8.cuh"

#include <type_traits>

#include "kernels/dtype_traits.cuh"
#include "kernels/launch.cuh"
#include "kernels/quant_formats.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::to_float;

template <typename U>
__device__ __forceinline__ U load_aligned(const uint8_t* p) {
#ifdef SLUICE_KERNEL_EMULATOR
  if (reinterpret_cast<uintptr_t>(p) % sizeof(U) != 0) {
    std::fprintf(stderr, "quant_gemv_int8: a %zu-byte load from a misaligned address\n", sizeof(U));
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

// ---- the activations ----------------------------------------------------------------------------

constexpr int kQuantizeThreads = 128;

// Eight lanes per 32 values of one token, four values each: the block's largest magnitude and
// its sum meet by shuffles within the eight. Every lane stays to the shuffles (lanes past the
// last block hold zeros and write nothing).
template <typename T>
__global__ void quantize_q8_kernel(const T* __restrict__ x, int x_row_stride, Q8Rows out) {
  const int blocks_per_row = out.cols / 32;
  const int thread =
      static_cast<int>(blockIdx.x) * kQuantizeThreads + static_cast<int>(threadIdx.x);
  const int i = thread / 8, part = thread % 8;
  const bool active = i < out.num_tokens * blocks_per_row;
  const int t = active ? i / blocks_per_row : 0, b = active ? i % blocks_per_row : 0;
  float v[4] = {};
  if (active) {
    const T* src = x + static_cast<int64_t>(t) * x_row_stride + 32 * b + 4 * part;
#pragma unroll
    for (int j = 0; j < 4; ++j) v[j] = to_float(src[j]);
  }
  float amax = fmaxf(fmaxf(fabsf(v[0]), fabsf(v[1])), fmaxf(fabsf(v[2]), fabsf(v[3])));
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2)
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, offset));
  const float d = amax / 127.0f;
  const float inv = d > 0.0f ? 1.0f / d : 0.0f;
  uint32_t word = 0;
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int q = static_cast<int>(rintf(v[j] * inv));
    sum += q;
    word |= (static_cast<uint32_t>(q) & 0xFFu) << (8 * j);
  }
#pragma unroll
  for (int offset = 4; offset > 0; offset /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, offset);
  if (!active) return;
  reinterpret_cast<uint32_t*>(out.qs + static_cast<int64_t>(t) * out.cols + 32 * b)[part] = word;
  if (part == 0) out.scales[i] = Q8Scale{d, d * static_cast<float>(sum)};
}

// ---- the GEMV -----------------------------------------------------------------------------------

constexpr int kThreads = 128;  // a thread block: four warps
constexpr int kTokens = 8;     // tokens per pass over a row at most

// acc[r][t] += block b of row r (unpacked in u[r]) times block b of token t0 + t, for t < n: each
// token's activations are loaded once for the kR rows.
template <int NT, int kR>
__device__ __forceinline__ void dot_blocks(const Unpacked (&u)[kR], const Q8Rows& x, int t0, int n,
                                           int b, float (&acc)[kR][NT]) {
  const int num_blocks = x.cols / 32;
#pragma unroll
  for (int t = 0; t < NT; ++t) {
    if (t < n) {
      const int8_t* xq = x.qs + static_cast<int64_t>(t0 + t) * x.cols + 32 * b;
      const uint4 a = *reinterpret_cast<const uint4*>(xq);
      const uint4 c = *reinterpret_cast<const uint4*>(xq + 16);
      const Q8Scale s = x.scales[static_cast<int64_t>(t0 + t) * num_blocks + b];
#pragma unroll
      for (int r = 0; r < kR; ++r) {
        int lo = __dp4a(u[r].q[0], static_cast<int>(a.x), 0);
        lo = __dp4a(u[r].q[1], static_cast<int>(a.y), lo);
        lo = __dp4a(u[r].q[2], static_cast<int>(a.z), lo);
        lo = __dp4a(u[r].q[3], static_cast<int>(a.w), lo);
        int hi = __dp4a(u[r].q[4], static_cast<int>(c.x), 0);
        hi = __dp4a(u[r].q[5], static_cast<int>(c.y), hi);
        hi = __dp4a(u[r].q[6], static_cast<int>(c.z), hi);
        hi = __dp4a(u[r].q[7], static_cast<int>(c.w), hi);
        // Spelled as fmas: a compiler left to contract it may do so differently in each
        // instantiation (NT), and a token's products must not depend on its pass.
        const float sums =
            fmaf(u[r].d_hi, static_cast<float>(hi), u[r].d_lo * static_cast<float>(lo));
        acc[r][t] = fmaf(u[r].m, s.d_sum, fmaf(s.d, sums, acc[r][t]));
      }
    }
  }
}

// The outputs of weight rows [first_row, first_row + num_rows) (num_rows <= kR) for tokens
// [t0, t0 + n) (n <= NT) into y[t, row], by the kS warps of a row team (part: the warp's index
// in it; kS > 1 takes one row). Lane l of part p takes the rows' 32-value blocks 32 (p + kS i) + l:
// a warp's loads of one step cover 32 consecutive blocks of each row. Each lane unpacks kU of its
// blocks of each row before it multiplies any (loads in flight); the blocks are summed in the same
// order whatever kU and kR are. The team's partial sums meet in `team` (shared, kS * NT floats;
// unused when kS is 1). Every warp of the team calls it.
template <typename Format, int NT, int kU, int kS, int kR, typename Y>
__device__ __forceinline__ void gemv_int8_rows(const uint8_t* __restrict__ w, size_t row_bytes,
                                               int first_row, int num_rows, const Q8Rows& x, int t0,
                                               int n, Y* __restrict__ y, int y_row_stride, int part,
                                               int lane, float* team) {
  static_assert(kR == 1 || kS == 1, "a row team takes one row");
  const int num_blocks = x.cols / 32;
  constexpr int kStride = 32 * kS;
  const uint8_t* w_rows[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r)
    w_rows[r] = w + static_cast<size_t>(first_row + min(r, num_rows - 1)) * row_bytes;
  float acc[kR][NT] = {};
  const auto unpack = [&](int block, Unpacked(&u)[kR]) {
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      Format::unpack(w_rows[r] + static_cast<size_t>(block / Format::kBlocks) * Format::kBytes,
                     block % Format::kBlocks, u[r]);
    }
  };
  int b = 32 * part + lane;
  for (; b + kStride * (kU - 1) < num_blocks; b += kStride * kU) {
    Unpacked u[kU][kR];
#pragma unroll
    for (int i = 0; i < kU; ++i) unpack(b + kStride * i, u[i]);
#pragma unroll
    for (int i = 0; i < kU; ++i) dot_blocks<NT, kR>(u[i], x, t0, n, b + kStride * i, acc);
  }
  if constexpr (kU > 1) {
    for (; b < num_blocks; b += kStride) {
      Unpacked u[kR];
      unpack(b, u);
      dot_blocks<NT, kR>(u, x, t0, n, b, acc);
    }
  }
#pragma unroll
  for (int r = 0; r < kR; ++r) {
#pragma unroll
    for (int t = 0; t < NT; ++t) {
      float s = acc[r][t];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
      acc[r][t] = s;
    }
  }
  if constexpr (kS > 1) {
    if (lane == 0) {
#pragma unroll
      for (int t = 0; t < NT; ++t) team[part * NT + t] = acc[0][t];
    }
    __syncthreads();
    if (part == 0 && lane == 0) {
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        float s = team[t];
#pragma unroll
        for (int p = 1; p < kS; ++p) s += team[p * NT + t];
        acc[0][t] = s;
      }
    }
  }
  if (part == 0 && lane == 0) {
#pragma unroll
    for (int r = 0; r < kR; ++r) {
#pragma unroll
      for (int t = 0; t < NT; ++t) {
        if (r < num_rows && t < n)
          y[static_cast<int64_t>(t0 + t) * y_row_stride + first_row + r] = from_float<Y>(acc[r][t]);
      }
    }
  }
}

// Grid: (ceil(rows / (4 kR / kS)), ceil(num_tokens / NT)); 4 warps a block, kS a row team, kR
// rows a team.
template <typename Format, typename Y, int NT, int kU, int kS, int kR>
__global__ void __launch_bounds__(kThreads)
    gemv_int8_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows, Q8Rows x,
                     Y* __restrict__ y, int y_row_stride) {
  constexpr int kTeams = kThreads / 32 / kS;
  __shared__ float team[kTeams][kS > 1 ? kS * NT : 1];
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int slot = warp / kS, part = warp % kS;
  const int first_row = (static_cast<int>(blockIdx.x) * kTeams + slot) * kR;
  // A team's warps all stay (the barrier); rows past the end read row 0 and write nothing.
  const bool in_range = first_row < rows;
  if (kS == 1 && !in_range) return;
  const int t0 = static_cast<int>(blockIdx.y) * NT;
  gemv_int8_rows<Format, NT, kU, kS, kR>(
      w, row_bytes, in_range ? first_row : 0, in_range ? min(kR, rows - first_row) : 1, x, t0,
      in_range ? min(NT, x.num_tokens - t0) : 0, y, y_row_stride, part, lane, team[slot]);
}

// Grid: (ceil(rows / 4), num_groups): group g's rows through its expert's matrix, kTokens at a
// time (the one-row-per-warp GEMV above, kU 1: the same sums as quant_gemv_int8's default).
template <typename Format, typename Y>
__global__ void gemv_int8_experts_kernel(const uint8_t* const* __restrict__ w, size_t row_bytes,
                                         int rows, Q8Rows x, const ExpertRows* __restrict__ groups,
                                         Y* __restrict__ y, int y_row_stride) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * (kThreads / 32) + warp;
  if (row >= rows) return;  // the whole warp
  const ExpertRows g = groups[blockIdx.y];
  for (int t0 = g.first_row; t0 < g.first_row + g.num_rows; t0 += kTokens) {
    gemv_int8_rows<Format, kTokens, 1, 1, 1>(w[g.expert], row_bytes, row, 1, x, t0,
                                             min(kTokens, g.first_row + g.num_rows - t0), y,
                                             y_row_stride, 0, lane, nullptr);
  }
}

unsigned int ceil_div(int a, int b) {
  return static_cast<unsigned int>((a + b - 1) / b);
}

size_t scales_offset(int num_tokens, int cols) {
  return (static_cast<size_t>(num_tokens) * cols + 15) / 16 * 16;
}

}  // namespace

size_t q8_rows_bytes(int num_tokens, int cols) {
  return scales_offset(num_tokens, cols) +
         static_cast<size_t>(num_tokens) * (cols / 32) * sizeof(Q8Scale);
}

Q8Rows q8_rows_in(void* buffer, int num_tokens, int cols) {
  auto* bytes = static_cast<uint8_t*>(buffer);
  return Q8Rows{reinterpret_cast<int8_t*>(bytes),
                reinterpret_cast<Q8Scale*>(bytes + scales_offset(num_tokens, cols)), num_tokens,
                cols};
}

template <typename T>
KernelStatus quantize_q8_rows(const T* x, int x_row_stride, const Q8Rows& out,
                              cudaStream_t stream) {
  if (out.cols % 32 != 0 || out.num_tokens < 0 || x_row_stride < out.cols)
    return detail::invalid_argument();
  const int count = out.num_tokens * (out.cols / 32);
  if (count == 0) return kKernelOk;
  detail::launch_kernel(quantize_q8_kernel<T>, dim3(ceil_div(8 * count, kQuantizeThreads)),
                        dim3(kQuantizeThreads), 0, stream, x, x_row_stride, out);
  return detail::launch_status();
}

bool has_int8_gemv(QuantFormat format) {
  return visit_int8_format(format, [](auto) {});
}

namespace {

// The ways quant_gemv_int8_variant has beyond the default: the formats of an 8B Q4_K_M or Q8_0
// file, bf16 activations (what a benchmark compares; every variant is a kernel to compile).
template <typename Format, typename Y>
constexpr bool kHasVariants = std::is_same_v<Y, __nv_bfloat16> &&
                              (std::is_same_v<Format, Q4_K> || std::is_same_v<Format, Q6_K> ||
                               std::is_same_v<Format, Q8_0>);

template <typename Format, typename Y, int NT, int kU, int kS, int kR>
void launch_gemv(const uint8_t* w, size_t w_row_bytes, int rows, const Q8Rows& x, Y* y,
                 int y_row_stride, cudaStream_t stream) {
  detail::launch_kernel(gemv_int8_kernel<Format, Y, NT, kU, kS, kR>,
                        dim3(ceil_div(rows, kThreads / 32 / kS * kR), ceil_div(x.num_tokens, NT)),
                        dim3(kThreads), 0, stream, w, w_row_bytes, rows, x, y, y_row_stride);
}

// Launches the variant's kernel; false when it has none for these types.
template <typename Format, typename Y, int NT>
bool launch_variant(QuantGemvVariant v, const uint8_t* w, size_t w_row_bytes, int rows,
                    const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream) {
  constexpr QuantGemvVariant d = kDefaultQuantGemvVariant;
  if (v.unroll == d.unroll && v.split == d.split && v.rows == d.rows) {
    launch_gemv<Format, Y, NT, d.unroll, d.split, d.rows>(w, w_row_bytes, rows, x, y, y_row_stride,
                                                          stream);
    return true;
  }
  if constexpr (kHasVariants<Format, Y>) {
    const auto go = [&]<int kU, int kS, int kR>() {
      if (v.unroll != kU || v.split != kS || v.rows != kR) return false;
      launch_gemv<Format, Y, NT, kU, kS, kR>(w, w_row_bytes, rows, x, y, y_row_stride, stream);
      return true;
    };
    return go.template operator()<1, 1, 1>() || go.template operator()<2, 1, 1>() ||
           go.template operator()<4, 1, 1>() || go.template operator()<1, 2, 1>() ||
           go.template operator()<2, 2, 1>() || go.template operator()<1, 4, 1>() ||
           go.template operator()<1, 1, 2>() || go.template operator()<2, 1, 2>();
  }
  return false;
}

}  // namespace

template <typename Y>
KernelStatus quant_gemv_int8_variant(QuantFormat format, const uint8_t* w, size_t w_row_bytes,
                                     int rows, const Q8Rows& x, Y* y, int y_row_stride,
                                     QuantGemvVariant variant, cudaStream_t stream) {
  if (rows < 0 || x.num_tokens < 0 || x.num_tokens > kQuantInt8GemvMaxTokens || x.cols % 32 != 0)
    return detail::invalid_argument();
  if (y_row_stride == 0) y_row_stride = rows;
  if (y_row_stride < rows) return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  visit_int8_format(format, [&]<typename Format>(Format) {
    constexpr int kValues = 32 * Format::kBlocks;
    if (x.cols % kValues != 0 ||
        w_row_bytes != static_cast<size_t>(x.cols / kValues) * Format::kBytes) {
      return;
    }
    if (rows == 0 || x.num_tokens == 0) {
      status = kKernelOk;
      return;
    }
    // One token (decode at batch 1) passes alone; more go kTokens at a time.
    const bool launched = x.num_tokens == 1
                              ? launch_variant<Format, Y, 1>(variant, w, w_row_bytes, rows, x, y,
                                                             y_row_stride, stream)
                              : launch_variant<Format, Y, kTokens>(variant, w, w_row_bytes, rows, x,
                                                                   y, y_row_stride, stream);
    if (launched) status = detail::launch_status();
  });
  return status;
}

template <typename Y>
KernelStatus quant_gemv_int8(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                             const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream) {
  return quant_gemv_int8_variant<Y>(format, w, w_row_bytes, rows, x, y, y_row_stride,
                                    kDefaultQuantGemvVariant, stream);
}

template <typename Y>
KernelStatus quant_gemv_int8_experts(QuantFormat format, const uint8_t* const* w,
                                     size_t w_row_bytes, int rows, const Q8Rows& x,
                                     const ExpertRows* groups, int num_groups, Y* y,
                                     int y_row_stride, cudaStream_t stream) {
  if (rows < 0 || num_groups < 0 || x.cols % 32 != 0 || y_row_stride < rows)
    return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  visit_int8_format(format, [&]<typename Format>(Format) {
    constexpr int kValues = 32 * Format::kBlocks;
    if (x.cols % kValues != 0 ||
        w_row_bytes != static_cast<size_t>(x.cols / kValues) * Format::kBytes) {
      return;
    }
    if (rows == 0 || num_groups == 0) {
      status = kKernelOk;
      return;
    }
    detail::launch_kernel(
        gemv_int8_experts_kernel<Format, Y>,
        dim3(ceil_div(rows, kThreads / 32), static_cast<unsigned int>(num_groups)), dim3(kThreads),
        0, stream, w, w_row_bytes, rows, x, groups, y, y_row_stride);
    status = detail::launch_status();
  });
  return status;
}

template KernelStatus quantize_q8_rows<float>(const float*, int, const Q8Rows&, cudaStream_t);
template KernelStatus quantize_q8_rows<__half>(const __half*, int, const Q8Rows&, cudaStream_t);
template KernelStatus quantize_q8_rows<__nv_bfloat16>(const __nv_bfloat16*, int, const Q8Rows&,
                                                      cudaStream_t);
template KernelStatus quant_gemv_int8<float>(QuantFormat, const uint8_t*, size_t, int,
                                             const Q8Rows&, float*, int, cudaStream_t);
template KernelStatus quant_gemv_int8<__half>(QuantFormat, const uint8_t*, size_t, int,
                                              const Q8Rows&, __half*, int, cudaStream_t);
template KernelStatus quant_gemv_int8<__nv_bfloat16>(QuantFormat, const uint8_t*, size_t, int,
                                                     const Q8Rows&, __nv_bfloat16*, int,
                                                     cudaStream_t);
template KernelStatus quant_gemv_int8_variant<float>(QuantFormat, const uint8_t*, size_t, int,
                                                     const Q8Rows&, float*, int, QuantGemvVariant,
                                                     cudaStream_t);
template KernelStatus quant_gemv_int8_variant<__half>(QuantFormat, const uint8_t*, size_t, int,
                                                      const Q8Rows&, __half*, int, QuantGemvVariant,
                                                      cudaStream_t);
template KernelStatus quant_gemv_int8_variant<__nv_bfloat16>(QuantFormat, const uint8_t*, size_t,
                                                             int, const Q8Rows&, __nv_bfloat16*,
                                                             int, QuantGemvVariant, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<float>(QuantFormat, const uint8_t* const*, size_t,
                                                     int, const Q8Rows&, const ExpertRows*, int,
                                                     float*, int, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<__half>(QuantFormat, const uint8_t* const*, size_t,
                                                      int, const Q8Rows&, const ExpertRows*, int,
                                                      __half*, int, cudaStream_t);
template KernelStatus quant_gemv_int8_experts<__nv_bfloat16>(QuantFormat, const uint8_t* const*,
                                                             size_t, int, const Q8Rows&,
                                                             const ExpertRows*, int, __nv_bfloat16*,
                                                             int, cudaStream_t);

}  // namespace sluice::kernels
