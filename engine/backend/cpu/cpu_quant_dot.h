// Dot products of quantized weight rows with quantized activation rows (cpu_quant_operands.h),
// for a tile of rows x tokens at a time, with a scalar, an AVX2 and an AVX-512 VNNI version
// picked at run time.
//
// Every output is computed by one fixed sequence of operations, whatever the tile, the path
// (rows unpacked, decoded in registers or interleaved into panels), the instruction set or the
// tokens beside it:
//  - Integer sums are exact, so how a kernel forms them does not matter (lanes, pairs, offset
//    activations with the weights' sum taken off again): only the value of each sum is fixed.
//  - Blocks of 32 (Q4_0 ... Q8_0, MXFP4), in order: acc = fma(float(S_b), d_w * d_x, acc), where
//  S_b
//    is the block's integer dot product; Q4_1/Q5_1 then take acc = fma(m_w, s_x, acc).
//  - Super-blocks of 256 (K-quants), in order: S = sum over the 16 groups of 16 of
//    group_scale * (integer dot product of the group), acc = fma(float(S), d_w * d_x, acc); the
//    types with a min also form M = sum over the groups of min * bsum and
//    min_acc = fma(float(M), dmin_w * d_x, min_acc), and the output is acc - min_acc.
// Every step is one IEEE operation (a fused multiply-add only where written: the kernel files
// are built with -ffp-contract=off), so the SIMD versions give the scalar version's bits: a
// token's outputs do not depend on num_tokens, tiling, thread split or instruction set. (One
// accumulator per output lets the batched kernel keep sixteen rows' outputs in the lanes of one
// register.)
#pragma once

#include <cstdint>

#include "engine/backend/cpu/cpu_quant_operands.h"
#include "engine/core/dtype.h"

namespace sluice {

enum class QuantKernelIsa : uint8_t { Scalar, Avx2, Avx512Vnni };

// The best kernel version this CPU runs (AVX-512 VNNI, AVX2 or scalar), under the ceiling of
// SLUICE_CPU_KERNELS (cpu_kernel_ceiling.h).
QuantKernelIsa best_quant_kernel_isa();
bool quant_kernel_isa_supported(QuantKernelIsa isa);
const char* quant_kernel_isa_name(QuantKernelIsa isa);

// Whether a kernel version wants the activations for weights of dtype stored as q + 128
// (QuantizedActivations): vpdpbusd multiplies unsigned by signed bytes, so the VNNI kernels make
// the activations the unsigned operand where the weights can be negative.
inline bool wants_offset_activations(QuantKernelIsa isa, DType dtype) {
  return isa == QuantKernelIsa::Avx512Vnni && find_quant_kernel_traits(dtype)->has_negative_values;
}

// Rows and tokens one kernel call computes at most.
inline constexpr int kQuantTileRows = 2;
inline constexpr int kQuantTileTokens = 4;

// y[t * ldy + r] = dot(weight row row0 + r, activation row t0 + t) for r < num_rows,
// t < num_tokens. Preconditions: 1 <= num_rows <= kQuantTileRows, 1 <= num_tokens <=
// kQuantTileTokens, weights.cols == activations.cols, activations quantized for weights.dtype
// and stored as wants_offset_activations says, isa supported.
void quant_dot_tile(const UnpackedWeights& weights, int row0, int num_rows,
                    const QuantizedActivations& activations, int64_t t0, int num_tokens, float* y,
                    int64_t ldy, QuantKernelIsa isa);

// Up to this many tokens quant_gemm reads the rows straight from their blocks (quant_direct_tile)
// where the kernel version has a direct kernel for the type. AVX-512 VNNI, TinyLlama's shapes:
// 1.2-1.4x the unpacked path at 8 tokens, even at 12-16, behind at 32. AVX2 (one thread, rows in
// L2): 1.2-1.6x at 2 tokens, 0.92-1.05x at 8, behind at 12-16.
inline constexpr int kQuantDirectMaxTokens = 2 * kQuantTileTokens;

// Whether quant_direct_tile has a kernel for weights of dtype in kernel version isa (today the
// AVX2 and AVX-512 VNNI versions, for Q8_0, Q4_K, Q5_K and Q6_K).
bool has_direct_quant_kernel(DType dtype, QuantKernelIsa isa);

// quant_dot_tile with the tile's weight rows read straight from their GGUF blocks (row r at
// rows + r * row_bytes, cols elements) and decoded in registers instead of unpacked first: the
// same outputs bit for bit, and faster when few tokens share each row (decoding). The
// preconditions of quant_dot_tile, and has_direct_quant_kernel(dtype, isa).
void quant_direct_tile(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                       int64_t cols, const QuantizedActivations& activations, int64_t t0,
                       int num_tokens, float* y, int64_t ldy, QuantKernelIsa isa);

// Whether quant_direct_rows has a kernel for dtype in kernel version isa (today Q4_K, Q6_K and
// Q8_0 in AVX-512 VNNI).
bool has_direct_rows_kernel(DType dtype, QuantKernelIsa isa);

// The most tokens quant_direct_rows takes for dtype (with has_direct_rows_kernel): 32 for Q4_K,
// whose blocks of rows take the tokens eight at a time, 8 for Q6_K and Q8_0. quant_gemm runs it up
// to there (AVX-512 VNNI, TinyLlama's shapes: Q4_K at 16 tokens in half the time of the panels).
int direct_rows_max_tokens(DType dtype, QuantKernelIsa isa);

// y[t * ldy + r] = dot(weight row r, activation row t) for row_begin <= r < row_end and every
// token of activations, the rows read straight from their blocks (row r at data + r *
// row_bytes) sixteen rows at a time (Q4_K and Q8_0 in the lanes of a register; Q6_K 16 outputs
// of 16 x 1 ... 2 x 8), for decoding. The same bits as quant_direct_tile. Preconditions: those of
// quant_direct_tile but 1 <= activations.num_tokens <= direct_rows_max_tokens(dtype, isa), and
// has_direct_rows_kernel(dtype, isa).
void quant_direct_rows(DType dtype, const uint8_t* data, size_t row_bytes, int64_t row_begin,
                       int64_t row_end, int64_t cols, const QuantizedActivations& activations,
                       float* y, int64_t ldy, QuantKernelIsa isa);

// Rows that one quant_direct_wide call computes for one token.
inline constexpr int kQuantWideRows = 8;

// Whether quant_direct_wide has a kernel for dtype in kernel version isa (today Q8_0 in AVX2
// and AVX-512 VNNI).
bool has_direct_wide_kernel(DType dtype, QuantKernelIsa isa);

// y[r] = dot(weight row r, activation row t) for the kQuantWideRows rows at rows (row r at
// rows + r * row_bytes, read from their blocks): one token against eight rows, one row per lane,
// for decoding a single sequence. The same bits as quant_direct_tile. Preconditions: those of
// quant_direct_tile, and has_direct_wide_kernel(dtype, isa).
void quant_direct_wide(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t cols,
                       const QuantizedActivations& activations, int64_t t, float* y,
                       QuantKernelIsa isa);

// Returns the dot product of one weight row (cols elements of dtype, in its GGUF blocks) with
// one activation row already quantized (cols / block blocks of activation_block_type(dtype)).
// The same kernels and order as the GEMM, so it equals the GEMM's output bit for bit.
float quant_dot(DType dtype, const void* weight_row, const void* activation_blocks, int64_t cols,
                QuantKernelIsa isa);

}  // namespace sluice
