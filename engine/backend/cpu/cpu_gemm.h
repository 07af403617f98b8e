// The CPU backend's matrix product in a fixed summation order. BLAS libraries pick kernels,
// blockings and split-K strategies by the matrix sizes, so with OpenBLAS a token's outputs
// changed with the number of tokens beside it (a greedy row changed between --max-num-seqs 7
// and 256). Here every output element is summed the same way whatever the batch: sixteen
// interleaved lanes (lane l takes k = l, l + 16, ... in increasing k, one fused multiply-add
// each), the K tail as one more vector padded with zeros, then a fixed tree over the lanes
// (l + 8, l + 4, l + 2, l + 1). The order depends on cols alone; tiles of tokens and rows only
// decide which elements are computed together, never how one is computed.
//
// F16 and BF16 weights are multiplied where they lie, widened in registers; widening is exact,
// so their product equals the fp32 product on the widened weights bit for bit.
//
// The kernels are built for AVX-512, for AVX2 + FMA + F16C and in portable C++; a process uses
// the best one its CPU has (or less, where SLUICE_CPU_KERNELS caps it: cpu_kernel_ceiling.h),
// always the same one. AVX-512 and AVX2 give the same bits; the
// portable kernels (no FMA) round each product before adding it, so on a CPU without FMA the
// bits differ from those of a CPU with it.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/dtype.h"

namespace sluice {

// y[t * ldy + r] = sum_k x[t * cols + k] * w[r * cols + k] for t < num_tokens, r < num_rows.
// x: [num_tokens, cols], w: [num_rows, cols] (one matrix or a block of its rows), y rows ldy
// apart. The result of each element depends only on its two input rows.
void gemm_nt_fixed_order(const float* x, int64_t num_tokens, const float* w, int64_t num_rows,
                         int64_t cols, float* y, int64_t ldy);

// The same for weights stored as w_type, one of the types gemm_multiplies_in_place() accepts;
// w: [num_rows, cols] of that type, 2-byte aligned for the 16-bit types.
void gemm_nt_fixed_order(const float* x, int64_t num_tokens, DType w_type, const void* w,
                         int64_t num_rows, int64_t cols, float* y, int64_t ldy);

// True for the stored types the kernels multiply without a widened copy: F32, F16, BF16.
bool gemm_multiplies_in_place(DType w_type);

// The instruction sets the kernels are built for.
enum class CpuKernelIsa : uint8_t { kPortable, kAvx2, kAvx512 };

// The instruction set the CPU kernels run with on this machine, e.g. "AVX-512, x86-64-v4".
const char* cpu_kernel_isa();
const char* cpu_kernel_isa_name(CpuKernelIsa isa);

// For tests that compare the instruction sets: those this CPU can run, the one in use first,
// and the product computed with a given one of them.
std::vector<CpuKernelIsa> runnable_cpu_kernel_isas();
void gemm_nt_fixed_order_with(CpuKernelIsa isa, const float* x, int64_t num_tokens, DType w_type,
                              const void* w, int64_t num_rows, int64_t cols, float* y, int64_t ldy);

}  // namespace sluice
