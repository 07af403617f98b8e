// Quantized weight rows interleaved sixteen at a time, made once at load so that the decoding
// kernels read one stream of aligned registers instead of sixteen rows' blocks that they then
// transpose in registers (cpu_quant_k_rows_avx512.cpp) on every product.
//
// A group is sixteen consecutive rows; its tiles follow one another, and the groups follow one
// another, so a thread's rows are one contiguous range of bytes. A tile holds one super-block
// (Q4_K, Q6_K) or one block (Q8_0) of each of the sixteen rows, every field transposed so that
// lane r of a 512-bit register is row r: the same bytes as the file's blocks, rearranged (Q8_0's
// quants stored as q + 128, so that vpdpbusd takes them as its unsigned operand and the
// activations stay signed). A matrix whose row count is not a multiple of 16 keeps its last rows
// in their blocks (QuantMatrixView::data).
//
// The tiles are made only where the CPU's best kernel version has kernels for them
// (has_interleaved_kernel: AVX-512 VNNI, whose kernels take a tile's sixteen rows in one zmm, and
// AVX2, whose kernels take them as two halves of eight), and they replace the rows (the file's
// pages of those rows are handed back at load). Products with more tokens than the interleaved
// kernels take (prefill, large batches) pack each group's panel straight from its tiles
// (pack_panel_from_tiles) for the AVX-512 panel kernels; a kernel version without panels (AVX2)
// multiplies the rows restored from the tiles (restore_group_rows). Every path gives the scalar
// definition's bits (cpu_quant_dot.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_operands.h"
#include "engine/backend/cpu/cpu_quant_panel.h"
#include "engine/core/dtype.h"

namespace sluice {

inline constexpr int kInterleaveRows = 16;

// Whether kernel version isa has kernels for tiles of dtype (Q4_K, Q6_K and Q8_0 with AVX-512
// VNNI and AVX2): rows are interleaved at load where the CPU's best version has.
bool has_interleaved_kernel(DType dtype, QuantKernelIsa isa);

// The elements of a row one tile holds (256 for the K-quants, 32 for Q8_0) and its bytes
// (sixteen rows' blocks).
int64_t interleaved_tile_cols(DType dtype);
size_t interleaved_tile_bytes(DType dtype);

// Bytes of the tiles for the first num_rows / 16 * 16 rows of cols elements.
size_t interleaved_bytes(DType dtype, int64_t num_rows, int64_t cols);

// Writes the tiles of rows [0, num_rows / 16 * 16) (row r at rows + r * row_bytes) to out
// (interleaved_bytes of them). Precondition: has_interleaved_kernel for some isa, cols a whole
// number of tiles.
void interleave_rows(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t num_rows,
                     int64_t cols, uint8_t* out);

// Restores the sixteen rows of one group from its tiles (group_tiles) into rows (row r at rows +
// r * row_bytes): the file's bytes exactly, for kernel versions without panels.
void restore_group_rows(DType dtype, const uint8_t* group_tiles, int64_t cols, uint8_t* rows,
                        size_t row_bytes);

// The panel (cpu_quant_panel.h) of the sixteen rows of one group, straight from its tiles: the
// same panel as pack_quant_panel_from_blocks makes from the rows, with no transposes.
// Precondition: has_interleaved_kernel(dtype, Avx512Vnni) and has_quant_panel_kernel(Avx512Vnni).
void pack_panel_from_tiles(DType dtype, const uint8_t* group_tiles, int64_t cols, QuantPanel& out);

// The most tokens quant_interleaved_rows takes for dtype in kernel version isa.
int interleaved_max_tokens(DType dtype, QuantKernelIsa isa);

// y[t * ldy + r] = dot(weight row r, activation row t) for every token of activations and the
// rows of groups [group_begin, group_end) of the tiles at tiles (interleave_rows' output): the
// scalar definition's bits. Preconditions: has_interleaved_kernel(dtype, isa), 1 <=
// activations.num_tokens <= interleaved_max_tokens(dtype, isa), activations quantized for dtype
// and not offset.
void quant_interleaved_rows(DType dtype, const uint8_t* tiles, int64_t group_begin,
                            int64_t group_end, int64_t cols,
                            const QuantizedActivations& activations, float* y, int64_t ldy,
                            QuantKernelIsa isa);

// The loop of every kernel version: for each group of [group_begin, group_end) and each run of
// n <= kTokenGroup tokens from t0, kernels[n - 1](the group's tiles, tiles per row, activations,
// sums, t0, y + 16 * group, ldy).
template <int kTokenGroup, typename Kernel, typename Sums>
void run_interleaved_groups(const Kernel* kernels, const Sums& sums, DType dtype,
                            const uint8_t* tiles, int64_t group_begin, int64_t group_end,
                            int64_t cols, const QuantizedActivations& activations, float* y,
                            int64_t ldy) {
  const int64_t num_tiles = cols / interleaved_tile_cols(dtype);
  const size_t group_bytes = static_cast<size_t>(num_tiles) * interleaved_tile_bytes(dtype);
  for (int64_t g = group_begin; g < group_end; ++g) {
    for (int64_t t0 = 0; t0 < activations.num_tokens; t0 += kTokenGroup) {
      const auto num_tokens =
          static_cast<int>(std::min<int64_t>(kTokenGroup, activations.num_tokens - t0));
      kernels[num_tokens - 1](tiles + static_cast<size_t>(g) * group_bytes, num_tiles, activations,
                              sums, t0, y + g * kInterleaveRows, ldy);
    }
  }
}

// The AVX-512 VNNI and AVX2 kernels (cpu_quant_interleaved_avx512.cpp,
// cpu_quant_interleaved_avx2.cpp), with quant_interleaved_rows' arguments.
void quant_interleaved_rows_avx512_vnni(DType dtype, const uint8_t* tiles, int64_t group_begin,
                                        int64_t group_end, int64_t cols,
                                        const QuantizedActivations& activations, float* y,
                                        int64_t ldy);
void quant_interleaved_rows_avx2(DType dtype, const uint8_t* tiles, int64_t group_begin,
                                 int64_t group_end, int64_t cols,
                                 const QuantizedActivations& activations, float* y, int64_t ldy);
void pack_panel_from_tiles_avx512_vnni(DType dtype, const uint8_t* group_tiles, int64_t cols,
                                       QuantPanel& out);

}  // namespace sluice
