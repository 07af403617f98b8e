// The integer GEMV of quant_gemv_int8.cuh. Each format unpacks one 32-value block of a weight row
// into eight words of four signed bytes, in value order, and says how the two 16-value halves'
// integer sums become floats: dx * (d_lo * sum_lo + d_hi * sum_hi) + m * dx * sum(qx).
//
// Loads: a block's bytes are read with the widest loads its offset allows. Rows lie back to back
// from 256-byte aligned storage, so a block's start is aligned to the largest power of two that
// divides its size (18 bytes: 2; 20: 4; 144: 16; 17: 1). The emulator checks every aligned load.
#include "kernels/quant_gemv_int8.cuh"

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

// One thread per 32 values of one token.
template <typename T>
__global__ void quantize_q8_kernel(const T* __restrict__ x, int x_row_stride, Q8Rows out) {
  const int blocks_per_row = out.cols / 32;
  const int i = static_cast<int>(blockIdx.x) * kQuantizeThreads + static_cast<int>(threadIdx.x);
  if (i >= out.num_tokens * blocks_per_row) return;
  const int t = i / blocks_per_row, b = i % blocks_per_row;
  const T* src = x + static_cast<int64_t>(t) * x_row_stride + 32 * b;
  float v[32];
  float amax = 0.0f;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    v[j] = to_float(src[j]);
    amax = fmaxf(amax, fabsf(v[j]));
  }
  const float d = amax / 127.0f;
  const float inv = d > 0.0f ? 1.0f / d : 0.0f;
  uint32_t words[8] = {};
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int q = static_cast<int>(rintf(v[j] * inv));
    sum += q;
    words[j / 4] |= (static_cast<uint32_t>(q) & 0xFFu) << (8 * (j % 4));
  }
  auto* dst = reinterpret_cast<uint4*>(out.qs + static_cast<int64_t>(t) * out.cols + 32 * b);
  dst[0] = uint4{words[0], words[1], words[2], words[3]};
  dst[1] = uint4{words[4], words[5], words[6], words[7]};
  out.scales[i] = Q8Scale{d, d * static_cast<float>(sum)};
}

// ---- the GEMV -----------------------------------------------------------------------------------

constexpr int kWarps = 4;   // rows per thread block, a warp each
constexpr int kTokens = 8;  // tokens per pass over a row

// Rows' outputs of one weight row for tokens [t0, t0 + n) (n <= kTokens) into y[t, row]. Lane l
// takes the row's 32-value blocks l, l + 32, ...: a warp's loads of one step cover consecutive
// blocks. The whole warp calls it.
template <typename Format, typename Y>
__device__ __forceinline__ void gemv_int8_row(const uint8_t* __restrict__ w_row, const Q8Rows& x,
                                              int t0, int n, Y* __restrict__ y, int y_row_stride,
                                              int row, int lane) {
  const int num_blocks = x.cols / 32;
  float acc[kTokens] = {};
  for (int b = lane; b < num_blocks; b += 32) {
    Unpacked u;
    Format::unpack(w_row + static_cast<size_t>(b / Format::kBlocks) * Format::kBytes,
                   b % Format::kBlocks, u);
#pragma unroll
    for (int t = 0; t < kTokens; ++t) {
      if (t < n) {
        const int8_t* xq = x.qs + static_cast<int64_t>(t0 + t) * x.cols + 32 * b;
        const uint4 a = *reinterpret_cast<const uint4*>(xq);
        const uint4 c = *reinterpret_cast<const uint4*>(xq + 16);
        int lo = __dp4a(u.q[0], static_cast<int>(a.x), 0);
        lo = __dp4a(u.q[1], static_cast<int>(a.y), lo);
        lo = __dp4a(u.q[2], static_cast<int>(a.z), lo);
        lo = __dp4a(u.q[3], static_cast<int>(a.w), lo);
        int hi = __dp4a(u.q[4], static_cast<int>(c.x), 0);
        hi = __dp4a(u.q[5], static_cast<int>(c.y), hi);
        hi = __dp4a(u.q[6], static_cast<int>(c.z), hi);
        hi = __dp4a(u.q[7], static_cast<int>(c.w), hi);
        const Q8Scale s = x.scales[static_cast<int64_t>(t0 + t) * num_blocks + b];
        acc[t] += s.d * (u.d_lo * static_cast<float>(lo) + u.d_hi * static_cast<float>(hi)) +
                  u.m * s.d_sum;
      }
    }
  }
#pragma unroll
  for (int t = 0; t < kTokens; ++t) {
    float s = acc[t];
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) s += __shfl_xor_sync(0xffffffffu, s, offset);
    if (lane == 0 && t < n) y[static_cast<int64_t>(t0 + t) * y_row_stride + row] = from_float<Y>(s);
  }
}

// Grid: (ceil(rows / kWarps), ceil(num_tokens / kTokens)).
template <typename Format, typename Y>
__global__ void gemv_int8_kernel(const uint8_t* __restrict__ w, size_t row_bytes, int rows,
                                 Q8Rows x, Y* __restrict__ y, int y_row_stride) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * kWarps + warp;
  if (row >= rows) return;  // the whole warp
  const int t0 = static_cast<int>(blockIdx.y) * kTokens;
  gemv_int8_row<Format>(w + static_cast<size_t>(row) * row_bytes, x, t0,
                        min(kTokens, x.num_tokens - t0), y, y_row_stride, row, lane);
}

// Grid: (ceil(rows / kWarps), num_groups): group g's rows through its expert's matrix, kTokens at
// a time.
template <typename Format, typename Y>
__global__ void gemv_int8_experts_kernel(const uint8_t* const* __restrict__ w, size_t row_bytes,
                                         int rows, Q8Rows x, const ExpertRows* __restrict__ groups,
                                         Y* __restrict__ y, int y_row_stride) {
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int row = static_cast<int>(blockIdx.x) * kWarps + warp;
  if (row >= rows) return;  // the whole warp
  const ExpertRows g = groups[blockIdx.y];
  const uint8_t* w_row = w[g.expert] + static_cast<size_t>(row) * row_bytes;
  for (int t0 = g.first_row; t0 < g.first_row + g.num_rows; t0 += kTokens) {
    gemv_int8_row<Format>(w_row, x, t0, min(kTokens, g.first_row + g.num_rows - t0), y,
                          y_row_stride, row, lane);
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
  detail::launch_kernel(quantize_q8_kernel<T>, dim3(ceil_div(count, kQuantizeThreads)),
                        dim3(kQuantizeThreads), 0, stream, x, x_row_stride, out);
  return detail::launch_status();
}

bool has_int8_gemv(QuantFormat format) {
  return visit_int8_format(format, [](auto) {});
}

template <typename Y>
KernelStatus quant_gemv_int8(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                             const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream) {
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
    detail::launch_kernel(gemv_int8_kernel<Format, Y>,
                          dim3(ceil_div(rows, kWarps), ceil_div(x.num_tokens, kTokens)),
                          dim3(32 * kWarps), 0, stream, w, w_row_bytes, rows, x, y, y_row_stride);
    status = detail::launch_status();
  });
  return status;
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
    detail::launch_kernel(gemv_int8_experts_kernel<Format, Y>,
                          dim3(ceil_div(rows, kWarps), static_cast<unsigned int>(num_groups)),
                          dim3(32 * kWarps), 0, stream, w, w_row_bytes, rows, x, groups, y,
                          y_row_stride);
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
