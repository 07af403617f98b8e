// The batched quantized kernel's weight operand: up to sixteen rows interleaved four elements
// at a time, so that one vpdpbusd multiplies four elements of every row by the same four
// activations of one token (broadcast) and each row's output lives in one lane of a register.
// Scales, mins and the offset corrections are laid out the same way, sixteen rows to a vector,
// so a block's or super-block's float work is a few instructions for all sixteen rows instead
// of a reduction per (row, token). The outputs follow the order of operations of cpu_quant_dot.h
// bit for bit (a row's lane computes exactly its own integer sums and float steps), so a token
// gets the same outputs from a panel as from the tile kernels.
//
// Built for each sixteen rows of a product with many tokens, straight from the GGUF blocks
// (Q8_0, Q4_K, Q5_K, Q6_K) or from unpacked rows (the other types); the decoding and
// interleaving are paid once and used by every token. AVX-512 VNNI only.
#pragma once

#include <cstdint>

#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_operands.h"

namespace sluice {

inline constexpr int kQuantPanelRows = 16;
// Tokens one panel kernel call computes at most (its accumulators fill the registers).
inline constexpr int kQuantPanelTokens = 6;

struct QuantPanel {
  DType dtype = DType::Q8_0;
  QuantFamily family = QuantFamily::Block32;
  int num_rows = 0;
  int64_t cols = 0;
  int group_elements = 16;           // super-block types: elements that share a scale (16 or 32)
  AlignedArray<int8_t> w;            // [steps of 4 elements][16 rows][4]
  AlignedArray<int32_t> scale;       // super-block types: [groups][16] each group's scale
  AlignedArray<int32_t> correction;  // types with negative values: [blocks][16] 128 * sum(w)
                                     // (super-blocks: 128 * sum over groups of scale * sum(w))
  AlignedArray<int32_t> mins;  // Super256Min: [cols / 32][16] mins of groups 2k, 2k+1 as int16
  AlignedArray<float> d;       // [blocks][16] d of each block (32) or super-block (256)
  AlignedArray<float> m;       // Block32Min: m of each block; Super256Min: dmin
};

// Whether the panel kernels exist for isa (AVX-512 VNNI, on x86).
bool has_quant_panel_kernel(QuantKernelIsa isa);

// Interleaves all rows of `rows` (at most kQuantPanelRows) into out.
// Precondition: has_quant_panel_kernel(Avx512Vnni).
void pack_quant_panel(const UnpackedWeights& rows, QuantPanel& out);

// The same panel built straight from num_rows rows of GGUF blocks (row r at rows + r *
// row_bytes), without unpacking them first; returns false (and leaves out alone) for the types
// that must be unpacked (today all but Q8_0, Q4_K, Q5_K and Q6_K).
bool pack_quant_panel_from_blocks(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                                  int64_t cols, QuantPanel& out);

// For packings that fill a panel's fields themselves (pack_panel_from_tiles,
// cpu_quant_interleave.h): sizes out's arrays for num_rows rows of cols elements of dtype; then,
// once w, d, m, scale and mins hold their values, finish_quant_panel adds the corrections of the
// types with negative values. Precondition: has_quant_panel_kernel(Avx512Vnni).
void shape_quant_panel(DType dtype, int num_rows, int64_t cols, QuantPanel& out);
void finish_quant_panel(QuantPanel& out);

// y[t * ldy + r] = dot(panel row r, activation row t0 + t) for r < panel.num_rows,
// t < num_tokens, with the bits of quant_dot_tile. Preconditions: 1 <= num_tokens <=
// kQuantPanelTokens, activations quantized for panel.dtype with offset values as
// wants_offset_activations(Avx512Vnni, dtype) says, has_quant_panel_kernel(Avx512Vnni).
void quant_panel_tile(const QuantPanel& panel, const QuantizedActivations& activations, int64_t t0,
                      int num_tokens, float* y, int64_t ldy);

}  // namespace sluice
