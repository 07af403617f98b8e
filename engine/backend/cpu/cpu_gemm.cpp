#include "engine/backend/cpu/cpu_gemm.h"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cstring>

#include "engine/backend/cpu/cpu_kernel_ceiling.h"
#include "engine/backend/cpu/cpu_simd16.h"

namespace sluice {

namespace {

// The weight bytes of one cache block of the product (cpu_gemm_tiles.inc): half of one core's
// L2, as the C library reports it (512 KiB when it does not). Block sizes decide which elements
// are computed together, never how one is, so the result does not depend on the machine's cache.
int64_t gemm_block_bytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (l2 <= 0) return int64_t{512} << 10;
    return std::clamp<int64_t>(l2 / 2, int64_t{128} << 10, int64_t{1} << 20);
  }();
  return bytes;
}

// A set without a wide tile (cpu_gemm_wide_tile_avx2.inc): the generic tiles do every product.
struct NoWideTile {
  static constexpr int kTokens = 0;
  template <typename W>
  static void run(const float*, const W*, int64_t, int64_t, float*, int64_t) {}
};

// The kernel body (cpu_gemm_tiles.inc) once per instruction set, each compiled for its set; a
// namespace each, so that the instantiations never mix.
namespace gemm_portable {
using simd16_portable::Simd16;
using WideTile = NoWideTile;
#include "engine/backend/cpu/cpu_gemm_tiles.inc"
}  // namespace gemm_portable

#if SLUICE_HAS_X86_SIMD16
#pragma GCC push_options
#pragma GCC target("arch=x86-64-v3")
namespace gemm_avx2 {
using simd16_avx2::Simd16;
#include "engine/backend/cpu/cpu_gemm_wide_tile_avx2.inc"  // WideTile, before the tiles that use it
// (the generic tiles)
#include "engine/backend/cpu/cpu_gemm_tiles.inc"
}  // namespace gemm_avx2
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("arch=x86-64-v4")
namespace gemm_avx512 {
using simd16_avx512::Simd16;
using WideTile = NoWideTile;
#include "engine/backend/cpu/cpu_gemm_tiles.inc"
}  // namespace gemm_avx512
#pragma GCC pop_options
#endif

template <typename W>
using GemmFn = void (*)(const float*, int64_t, const W*, int64_t, int64_t, float*, int64_t);

struct Kernels {
  const char* name;
  GemmFn<float> f32;
  GemmFn<Half> f16;
  GemmFn<BFloat16> bf16;
};

const Kernels& kernels_for(CpuKernelIsa isa) {
  static const Kernels portable = {"portable C++", gemm_portable::gemm<float>,
                                   gemm_portable::gemm<Half>, gemm_portable::gemm<BFloat16>};
#if SLUICE_HAS_X86_SIMD16
  static const Kernels avx2 = {"AVX2 + FMA, x86-64-v3", gemm_avx2::gemm<float>,
                               gemm_avx2::gemm<Half>, gemm_avx2::gemm<BFloat16>};
  static const Kernels avx512 = {"AVX-512, x86-64-v4", gemm_avx512::gemm<float>,
                                 gemm_avx512::gemm<Half>, gemm_avx512::gemm<BFloat16>};
  if (isa == CpuKernelIsa::kAvx512) return avx512;
  if (isa == CpuKernelIsa::kAvx2) return avx2;
#endif
  assert(isa == CpuKernelIsa::kPortable);  // only runnable sets are asked for
  return portable;
}

CpuKernelIsa best_isa() {
#if SLUICE_HAS_X86_SIMD16
  if (__builtin_cpu_supports("x86-64-v4")) return CpuKernelIsa::kAvx512;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuKernelIsa::kAvx2;
#endif
  return CpuKernelIsa::kPortable;
}

// Chosen once: every product of a process runs the same kernels (the CPU's best, or less where
// SLUICE_CPU_KERNELS caps them).
const Kernels& kernels() {
  static const Kernels& chosen = []() -> const Kernels& {
    CpuKernelIsa isa = best_isa();
    switch (cpu_kernel_ceiling()) {
      case CpuKernelCeiling::kNative:
        break;
      case CpuKernelCeiling::kAvx2:
        if (isa == CpuKernelIsa::kAvx512) isa = CpuKernelIsa::kAvx2;
        break;
      case CpuKernelCeiling::kPortable:
        isa = CpuKernelIsa::kPortable;
        break;
    }
    return kernels_for(isa);
  }();
  return chosen;
}

void run(const Kernels& k, const float* x, int64_t num_tokens, DType w_type, const void* w,
         int64_t num_rows, int64_t cols, float* y, int64_t ldy) {
  switch (w_type) {
    case DType::F32:
      return k.f32(x, num_tokens, static_cast<const float*>(w), num_rows, cols, y, ldy);
    case DType::F16:
      return k.f16(x, num_tokens, static_cast<const Half*>(w), num_rows, cols, y, ldy);
    case DType::BF16:
      return k.bf16(x, num_tokens, static_cast<const BFloat16*>(w), num_rows, cols, y, ldy);
    default:
      assert(false && "gemm_nt_fixed_order: a type gemm_multiplies_in_place() refuses");
  }
}

}  // namespace

void gemm_nt_fixed_order(const float* x, int64_t num_tokens, const float* w, int64_t num_rows,
                         int64_t cols, float* y, int64_t ldy) {
  kernels().f32(x, num_tokens, w, num_rows, cols, y, ldy);
}

void gemm_nt_fixed_order(const float* x, int64_t num_tokens, DType w_type, const void* w,
                         int64_t num_rows, int64_t cols, float* y, int64_t ldy) {
  run(kernels(), x, num_tokens, w_type, w, num_rows, cols, y, ldy);
}

bool gemm_multiplies_in_place(DType w_type) {
  return w_type == DType::F32 || w_type == DType::F16 || w_type == DType::BF16;
}

const char* cpu_kernel_isa() {
  return kernels().name;
}

const char* cpu_kernel_isa_name(CpuKernelIsa isa) {
  return kernels_for(isa).name;
}

std::vector<CpuKernelIsa> runnable_cpu_kernel_isas() {
  std::vector<CpuKernelIsa> out;
  for (auto isa = static_cast<int>(best_isa()); isa >= 0; --isa)
    out.push_back(static_cast<CpuKernelIsa>(isa));
  return out;
}

void gemm_nt_fixed_order_with(CpuKernelIsa isa, const float* x, int64_t num_tokens, DType w_type,
                              const void* w, int64_t num_rows, int64_t cols, float* y,
                              int64_t ldy) {
  run(kernels_for(isa), x, num_tokens, w_type, w, num_rows, cols, y, ldy);
}

}  // namespace sluice
