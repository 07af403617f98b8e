// The integer GEMV of weights kept in their GGUF blocks, for decode and small batches (issue 29):
// the tokens' activations are quantized once per product to 8 bits per value with one float scale
// per 32 (as llama.cpp's MMVQ quantizes them to q8_1), and each 32-value block of a weight row is
// unpacked to signed bytes and multiplied with them four at a time in integer dot products
// (__dp4a), then scaled in float. A weight is read once per pass and touched by a handful of
// integer instructions per four values, where the float GEMV of quant_linear.cuh decodes each
// value to a float and multiplies it once per token.
//
// Formats: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K and MXFP4 (has_int8_gemv); Q2_K and Q3_K
// stay on the float GEMV. The products differ from the float GEMV's by the activations' 8-bit
// rounding (about 0.4% of a value at most), which the CPU backend's quantized products share.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/dequantize.cuh"
#include "kernels/moe.cuh"
#include "kernels/status.h"

namespace sluice::kernels {

// Per token and 32 values: d, the scale (value = q * d), and d * sum(q).
struct Q8Scale {
  float d;
  float d_sum;
};

// Tokens' activations quantized for quant_gemv_int8: qs [num_tokens, cols] int8, scales
// [num_tokens, cols / 32]. cols is a multiple of 32.
struct Q8Rows {
  int8_t* qs = nullptr;
  Q8Scale* scales = nullptr;
  int num_tokens = 0;
  int cols = 0;
};

// The bytes Q8Rows of num_tokens rows of cols values take (qs, then scales 16-byte aligned).
size_t q8_rows_bytes(int num_tokens, int cols);
// Q8Rows over `buffer` (q8_rows_bytes(num_tokens, cols) bytes, 16-byte aligned).
Q8Rows q8_rows_in(void* buffer, int num_tokens, int cols);

// Quantizes x[num_tokens, cols] (rows x_row_stride elements apart) into out: per 32 values,
// d = max |x| / 127 and q = round(x / d) (0 for an all-zero block). Returns an invalid-argument
// status when cols is not a multiple of 32 or out's shape differs.
template <typename T>
KernelStatus quantize_q8_rows(const T* x, int x_row_stride, const Q8Rows& out, cudaStream_t stream);

// Whether quant_gemv_int8 has a kernel for format.
bool has_int8_gemv(QuantFormat format);

// y[t, r] = sum_k x[t, k] . w[r, k] for t < x.num_tokens, r < rows, from the quantized x, rounded
// once to Y. w: rows rows of w_row_bytes bytes, x.cols values each in `format` blocks (the
// whole-row alignment quant_linear's callers give: 256-byte aligned storage, rows back to back).
// y: rows y_row_stride elements apart (0: rows). Returns an invalid-argument status for a format
// without a kernel, a w_row_bytes that is not x.cols' blocks, or more than kQuantInt8GemvMaxTokens
// tokens.
inline constexpr int kQuantInt8GemvMaxTokens = 16;
template <typename Y>
KernelStatus quant_gemv_int8(QuantFormat format, const uint8_t* w, size_t w_row_bytes, int rows,
                             const Q8Rows& x, Y* y, int y_row_stride, cudaStream_t stream);

// How the integer GEMV spreads a row's work: `unroll` blocks a lane unpacks before it multiplies
// any (1, 2 or 4: loads in flight per lane), `split` warps that share one row (1, 2 or 4: their
// partial sums meet in shared memory) and `rows` rows a warp takes at once (1 or 2, split 1: each
// token's activations loaded once for both). The blocks' summation order depends on split alone.
struct QuantGemvVariant {
  int unroll = 1;
  int split = 1;
  int rows = 1;
};
// What quant_gemv_int8 runs: two blocks of each of two rows in flight per lane. On an H200
// (sluice_kernel_bench, bench/RESULTS.md) it took an 8B model's products in its Q4_K and Q8_0
// blocks 10-14% faster than one block of one row at one token and 24-29% faster at eight; Q6_K
// alone is 10% slower at one token.
inline constexpr QuantGemvVariant kDefaultQuantGemvVariant{2, 1, 2};

// quant_gemv_int8 as `variant` spreads it. Variants other than the default exist for Q4_K, Q6_K
// and Q8_0 with bf16 outputs (for benchmarks); elsewhere they are an invalid argument.
template <typename Y>
KernelStatus quant_gemv_int8_variant(QuantFormat format, const uint8_t* w, size_t w_row_bytes,
                                     int rows, const Q8Rows& x, Y* y, int y_row_stride,
                                     QuantGemvVariant variant, cudaStream_t stream);

// A mixture-of-experts layer's products in one launch: for every group g, the rows
// [g.first_row, g.first_row + g.num_rows) of x (the tokens routed to expert g.expert, grouped by
// expert) through w[g.expert] (a device array of each expert's matrix: `rows` rows of
// w_row_bytes, all in `format`) into the same rows of y. Any number of rows per group (kTokens
// at a time). Returns an invalid-argument status as quant_gemv_int8 does.
template <typename Y>
KernelStatus quant_gemv_int8_experts(QuantFormat format, const uint8_t* const* w,
                                     size_t w_row_bytes, int rows, const Q8Rows& x,
                                     const ExpertRows* groups, int num_groups, Y* y,
                                     int y_row_stride, cudaStream_t stream);

}  // namespace sluice::kernels
