// The CPU backend's matrix product in a fixed summation order. BLAS libraries pick kernels,
// blockings and split-K strategies by the matrix sizes, so with OpenBLAS a token's outputs
// changed with the number of tokens beside it (a greedy row changed between --max-num-seqs 7
// and 256). Here every output element is summed the same way whatever the batch: sixteen
// interleaved lanes (lane l takes k = l, l + 16, ... in increasing k), then the K tail into lanes
// 0.., then a fixed tree over the lanes. Tiles of tokens and rows only decide which elements are
// computed together, never how one is computed.
#pragma once

#include <cstdint>

namespace sluice {

// y[t * ldy + r] = sum_k x[t * cols + k] * w[r * cols + k] for t < num_tokens, r < num_rows.
// x: [num_tokens, cols], w: [num_rows, cols] (one matrix or a block of its rows), y rows ldy
// apart. The result of each element depends only on its two input rows.
void gemm_nt_fixed_order(const float* x, int64_t num_tokens, const float* w, int64_t num_rows,
                         int64_t cols, float* y, int64_t ldy);

// The instruction set the CPU kernels run with on this machine, e.g. "AVX-512, x86-64-v4".
const char* cpu_kernel_isa();

}  // namespace sluice
