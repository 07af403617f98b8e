// One warp's integer matrix product on the tensor cores, D = A · B + C with signed bytes and
// 32-bit sums (PTX mma.sync m16n8k32 / m16n8k16, .s8.s8.s32), in the fragment layout PTX fixes.
// Lane l = 4 g + t (g = l / 4, t = l % 4) holds, as words of four bytes in k order:
// - A (16 x K, row major): a[0] row g, values 4t..4t+3; a[1] row g + 8, the same values; for
//   K = 32 also a[2], a[3]: rows g, g + 8, values 16 + 4t..;
// - B (K x 8, column major): b[0] column g, values 4t..4t+3; for K = 32 also b[1]: 16 + 4t..;
// - C and D (16 x 8): c[0], c[1] row g, columns 2t, 2t + 1; c[2], c[3] row g + 8, the same.
// Before sm_80 and in the CPU emulator the same product is computed by gathering the operands
// through shuffles (right, and slow: never the measured choice on a GPU that has the instruction).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#if !defined(SLUICE_KERNEL_EMULATOR) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define SLUICE_MMA_INT8 1
#else
#define SLUICE_MMA_INT8 0
#endif

namespace sluice::kernels {

namespace detail {

// Sum of the four signed byte products of two words.
__device__ __forceinline__ int dot4_s8(uint32_t a, uint32_t b) {
  int sum = 0;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    sum += static_cast<int>(static_cast<int8_t>(a >> (8 * j))) *
           static_cast<int>(static_cast<int8_t>(b >> (8 * j)));
  }
  return sum;
}

// The product of kChunks chunks of four k values by shuffles: row g's and g + 8's words from
// lanes 4 g + c, column n's from lanes 4 n + c.
template <int kChunks>
__device__ __forceinline__ void mma_s8_by_shuffles(int (&c)[4], const uint32_t* a,
                                                   const uint32_t* b) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const int g = lane / 4, t = lane % 4;
  constexpr int kHalves = kChunks / 4;  // 1 (K = 16) or 2 (K = 32)
#pragma unroll
  for (int half = 0; half < kHalves; ++half) {
    // This lane's words of the half, both rows in one 64-bit value, and its column's word.
    const unsigned long long rows = static_cast<unsigned long long>(a[2 * half]) |
                                    static_cast<unsigned long long>(a[2 * half + 1]) << 32;
    const uint32_t col = b[half];
#pragma unroll
    for (int q = 0; q < 4; ++q) {
      const unsigned long long mine = __shfl_sync(0xffffffffu, rows, 4 * g + q);
      const uint32_t col0 = __shfl_sync(0xffffffffu, col, 4 * (2 * t) + q);
      const uint32_t col1 = __shfl_sync(0xffffffffu, col, 4 * (2 * t + 1) + q);
      const auto row0 = static_cast<uint32_t>(mine), row8 = static_cast<uint32_t>(mine >> 32);
      c[0] += dot4_s8(row0, col0);
      c[1] += dot4_s8(row0, col1);
      c[2] += dot4_s8(row8, col0);
      c[3] += dot4_s8(row8, col1);
    }
  }
}

}  // namespace detail

// c += a (16 x 32) · b (32 x 8).
__device__ __forceinline__ void mma_s8_k32(int (&c)[4], const uint32_t (&a)[4],
                                           const uint32_t (&b)[2]) {
#if SLUICE_MMA_INT8
  asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
      "{%8, %9}, {%0, %1, %2, %3};"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  // a[0], a[1] and b[0] cover values 0-15, a[2], a[3] and b[1] values 16-31.
  detail::mma_s8_by_shuffles<8>(c, a, b);
#endif
}

// c += a (16 x 16) · b (16 x 8).
__device__ __forceinline__ void mma_s8_k16(int (&c)[4], const uint32_t (&a)[2], uint32_t b) {
#if SLUICE_MMA_INT8
  asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5}, {%6}, "
      "{%0, %1, %2, %3};"
      : "+r"(c[0]), "+r"(c[1]), "+r"(c[2]), "+r"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(b));
#else
  const uint32_t bs[1] = {b};
  detail::mma_s8_by_shuffles<4>(c, a, bs);
#endif
}

}  // namespace sluice::kernels
