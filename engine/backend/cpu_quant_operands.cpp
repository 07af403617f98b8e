#include "engine/backend/cpu_quant_operands.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "engine/backend/cpu_math.h"
#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

using namespace quant;  // the block structs and sizes

int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

int64_t scale_stride_for(int64_t num_blocks) {
  return round_up(num_blocks, 2) + kScalePadding;
}

template <typename Block>
const Block* blocks_of(const uint8_t* row) {
  return reinterpret_cast<const Block*>(row);
}

// One decoded row: where the unpacker writes.
struct RowOut {
  int8_t* w;            // [cols] centred values
  int32_t* lane_scale;  // [cols / 4] (super-block types)
  float* d;             // [blocks]
  float* m;             // [blocks] (types with a min)
  int16_t* mins;        // [cols / 16] (super-block types with a min)
};

// ---- blocks of 32: element j < 16 is the low nibble of qs[j], j >= 16 the high nibble of
// qs[j - 16]; the fifth bit of element j is bit j of qh.

template <typename Block, int kOffset, bool kHasMin, bool kHasHighBit>
SLUICE_ALWAYS_INLINE void unpack_nibble_blocks(const uint8_t* src, int64_t cols,
                                               const RowOut& out) {
  const Block* blocks = blocks_of<Block>(src);
  for (int64_t b = 0; b < cols / kBlock32; ++b) {
    const Block& blk = blocks[b];
    int8_t* w = out.w + b * kBlock32;
    uint32_t qh = 0;
    if constexpr (kHasHighBit) std::memcpy(&qh, blk.qh, sizeof qh);
    for (int j = 0; j < kBlock32 / 2; ++j) {
      int lo = blk.qs[j] & 0x0f;
      int hi = blk.qs[j] >> 4;
      if constexpr (kHasHighBit) {
        lo |= static_cast<int>((qh >> j) & 1u) << 4;
        hi |= static_cast<int>((qh >> (j + 16)) & 1u) << 4;
      }
      w[j] = static_cast<int8_t>(lo - kOffset);
      w[j + kBlock32 / 2] = static_cast<int8_t>(hi - kOffset);
    }
    out.d[b] = half_to_float(blk.d);
    if constexpr (kHasMin) out.m[b] = half_to_float(blk.m);
  }
}

SLUICE_ALWAYS_INLINE void unpack_q8_0(const uint8_t* src, int64_t cols, const RowOut& out) {
  const BlockQ8_0* blocks = blocks_of<BlockQ8_0>(src);
  for (int64_t b = 0; b < cols / kBlock32; ++b) {
    std::memcpy(out.w + b * kBlock32, blocks[b].qs, kBlock32);
    out.d[b] = half_to_float(blocks[b].d);
  }
}

// ---- super-blocks of 256. Groups of 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K) elements share
// an integer scale; lane_scale repeats it for each group of 4 elements.

SLUICE_ALWAYS_INLINE void fill_lane_scales(const int32_t* group_scale, int group_elements,
                                           int32_t* lane_scale) {
  for (int lane = 0; lane < kBlockK / 4; ++lane) {
    lane_scale[lane] = group_scale[lane * 4 / group_elements];
  }
}

// The 2-bit field of element e of a Q2_K/Q3_K super-block: each 32 bytes of qs hold four
// 32-element runs, shifted by 0, 2, 4, 6.
SLUICE_ALWAYS_INLINE int two_bit_field(const uint8_t* qs, int e) {
  const int half = e / 128;
  const int r = e % 128;
  return (qs[32 * half + r % 32] >> (2 * (r / 32))) & 3;
}

SLUICE_ALWAYS_INLINE void unpack_q2_k(const uint8_t* src, int64_t cols, const RowOut& out) {
  const BlockQ2_K* blocks = blocks_of<BlockQ2_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ2_K& blk = blocks[b];
    int8_t* w = out.w + b * kBlockK;
    for (int e = 0; e < kBlockK; ++e) w[e] = static_cast<int8_t>(two_bit_field(blk.qs, e));
    int32_t scales[16];
    for (int g = 0; g < 16; ++g) {
      scales[g] = blk.scales[g] & 0x0f;
      out.mins[b * 16 + g] = static_cast<int16_t>(blk.scales[g] >> 4);
    }
    fill_lane_scales(scales, 16, out.lane_scale + b * (kBlockK / 4));
    out.d[b] = half_to_float(blk.d);
    out.m[b] = half_to_float(blk.dmin);
  }
}

SLUICE_ALWAYS_INLINE void unpack_q3_k(const uint8_t* src, int64_t cols, const RowOut& out) {
  const BlockQ3_K* blocks = blocks_of<BlockQ3_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ3_K& blk = blocks[b];
    int8_t* w = out.w + b * kBlockK;
    // The third bit is stored inverted: clear means "minus 4".
    for (int e = 0; e < kBlockK; ++e) {
      const int high = (blk.hmask[e % 32] >> (e / 32)) & 1;
      w[e] = static_cast<int8_t>(two_bit_field(blk.qs, e) - (high ? 0 : 4));
    }
    // Sixteen 6-bit scales: low 4 bits in bytes 0-7 (low nibbles, then high nibbles), high 2
    // bits in bytes 8-11; stored with a bias of 32.
    int32_t scales[16];
    for (int g = 0; g < 16; ++g) {
      const int low = g < 8 ? blk.scales[g] & 0x0f : blk.scales[g - 8] >> 4;
      const int high = (blk.scales[8 + g % 4] >> (2 * (g / 4))) & 3;
      scales[g] = (low | high << 4) - 32;
    }
    fill_lane_scales(scales, 16, out.lane_scale + b * (kBlockK / 4));
    out.d[b] = half_to_float(blk.d);
  }
}

// The 6-bit scale and min of 32-element group g of a Q4_K/Q5_K super-block (ggml's
// get_scale_min_k4 layout).
SLUICE_ALWAYS_INLINE void scale_min_k4(const uint8_t* s, int g, int32_t& scale, int16_t& min) {
  if (g < 4) {
    scale = s[g] & 63;
    min = static_cast<int16_t>(s[g + 4] & 63);
  } else {
    scale = (s[g + 4] & 0x0f) | (s[g - 4] >> 6) << 4;
    min = static_cast<int16_t>((s[g + 4] >> 4) | (s[g] >> 6) << 4);
  }
}

// Q4_K and Q5_K: 64-element chunk c takes the low nibbles of qs[32c..32c+31], then the high
// ones; Q5_K's fifth bit of element e is bit e / 32 of qh[e % 32].
template <typename Block, bool kHasHighBit>
SLUICE_ALWAYS_INLINE void unpack_q45_k(const uint8_t* src, int64_t cols, const RowOut& out) {
  const Block* blocks = blocks_of<Block>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const Block& blk = blocks[b];
    int8_t* w = out.w + b * kBlockK;
    for (int e = 0; e < kBlockK; ++e) {
      const int chunk = e / 64;
      const int r = e % 64;
      int q = (blk.qs[32 * chunk + r % 32] >> (r < 32 ? 0 : 4)) & 0x0f;
      if constexpr (kHasHighBit) q |= ((blk.qh[e % 32] >> (e / 32)) & 1) << 4;
      w[e] = static_cast<int8_t>(q);
    }
    int32_t scales[8];
    for (int g = 0; g < 8; ++g) {
      int16_t min;
      scale_min_k4(blk.scales, g, scales[g], min);
      out.mins[b * 16 + 2 * g] = min;
      out.mins[b * 16 + 2 * g + 1] = min;
    }
    fill_lane_scales(scales, 32, out.lane_scale + b * (kBlockK / 4));
    out.d[b] = half_to_float(blk.d);
    out.m[b] = half_to_float(blk.dmin);
  }
}

// Q6_K: each 128-element half has 64 bytes of ql and 32 of qh; quarter k of the half takes
// ql[l + 32 * (k & 1)] (low nibble for k < 2, high for k >= 2) and bits 2k, 2k+1 of qh[l].
SLUICE_ALWAYS_INLINE void unpack_q6_k(const uint8_t* src, int64_t cols, const RowOut& out) {
  const BlockQ6_K* blocks = blocks_of<BlockQ6_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ6_K& blk = blocks[b];
    int8_t* w = out.w + b * kBlockK;
    for (int e = 0; e < kBlockK; ++e) {
      const int half = e / 128;
      const int quarter = (e % 128) / 32;
      const int l = e % 32;
      const int low = (blk.ql[64 * half + l + 32 * (quarter & 1)] >> (4 * (quarter >> 1))) & 0x0f;
      const int high = (blk.qh[32 * half + l] >> (2 * quarter)) & 3;
      w[e] = static_cast<int8_t>((low | high << 4) - 32);
    }
    int32_t scales[16];
    for (int g = 0; g < 16; ++g) scales[g] = blk.scales[g];
    fill_lane_scales(scales, 16, out.lane_scale + b * (kBlockK / 4));
    out.d[b] = half_to_float(blk.d);
  }
}

SLUICE_CPU_CLONES void unpack_row(DType dtype, const uint8_t* src, int64_t cols,
                                  const RowOut& out) {
  switch (dtype) {
    case DType::Q4_0:
      return unpack_nibble_blocks<BlockQ4_0, 8, false, false>(src, cols, out);
    case DType::Q4_1:
      return unpack_nibble_blocks<BlockQ4_1, 0, true, false>(src, cols, out);
    case DType::Q5_0:
      return unpack_nibble_blocks<BlockQ5_0, 16, false, true>(src, cols, out);
    case DType::Q5_1:
      return unpack_nibble_blocks<BlockQ5_1, 0, true, true>(src, cols, out);
    case DType::Q8_0:
      return unpack_q8_0(src, cols, out);
    case DType::Q2_K:
      return unpack_q2_k(src, cols, out);
    case DType::Q3_K:
      return unpack_q3_k(src, cols, out);
    case DType::Q4_K:
      return unpack_q45_k<BlockQ4_K, false>(src, cols, out);
    case DType::Q5_K:
      return unpack_q45_k<BlockQ5_K, true>(src, cols, out);
    case DType::Q6_K:
      return unpack_q6_k(src, cols, out);
    default:
      fail("unpack_weight_rows: ", dtype_name(dtype), " is not a quantized type");
  }
}

const QuantKernelTraits& require_traits(DType dtype) {
  const QuantKernelTraits* traits = find_quant_kernel_traits(dtype);
  if (!traits) fail(dtype_name(dtype), " has no quantized CPU kernels");
  return *traits;
}

bool is_super256(QuantFamily family) {
  return family == QuantFamily::Super256 || family == QuantFamily::Super256Min;
}

bool has_min(QuantFamily family) {
  return family == QuantFamily::Block32Min || family == QuantFamily::Super256Min;
}

}  // namespace

const QuantKernelTraits* find_quant_kernel_traits(DType dtype) {
  static constexpr QuantKernelTraits kTraits[] = {
      {DType::Q4_0, QuantFamily::Block32, ActivationBlockType::Q8_0},
      {DType::Q4_1, QuantFamily::Block32Min, ActivationBlockType::Q8_1},
      {DType::Q5_0, QuantFamily::Block32, ActivationBlockType::Q8_0},
      {DType::Q5_1, QuantFamily::Block32Min, ActivationBlockType::Q8_1},
      {DType::Q8_0, QuantFamily::Block32, ActivationBlockType::Q8_0},
      {DType::Q2_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K},
      {DType::Q3_K, QuantFamily::Super256, ActivationBlockType::Q8_K},
      {DType::Q4_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K},
      {DType::Q5_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K},
      {DType::Q6_K, QuantFamily::Super256, ActivationBlockType::Q8_K},
  };
  for (const QuantKernelTraits& traits : kTraits) {
    if (traits.dtype == dtype) return &traits;
  }
  return nullptr;
}

QuantFamily quant_family(DType dtype) {
  return require_traits(dtype).family;
}

ActivationBlockType activation_block_type(DType dtype) {
  return require_traits(dtype).activation;
}

void shape_activations(DType dtype, int64_t num_tokens, int64_t cols, bool is_offset_u8,
                       QuantizedActivations& out) {
  out.type = activation_block_type(dtype);
  const int64_t block = activation_block_elements(out.type);
  assert(cols % block == 0);  // callers validated the row length
  out.is_offset_u8 = is_offset_u8;
  out.num_tokens = num_tokens;
  out.cols = cols;
  out.qs_stride = round_up(cols, kQuantChunk);
  out.scale_stride = scale_stride_for(cols / block);
  out.qs.resize(static_cast<size_t>(num_tokens * out.qs_stride));
  out.scale.resize(static_cast<size_t>(num_tokens * out.scale_stride));
  out.sum.resize(out.type == ActivationBlockType::Q8_1
                     ? static_cast<size_t>(num_tokens * out.scale_stride)
                     : 0);
  out.bsum.resize(
      out.type == ActivationBlockType::Q8_K ? static_cast<size_t>(num_tokens * (cols / 16)) : 0);
}

void store_activation_blocks(const void* blocks, int64_t t, QuantizedActivations& out) {
  int8_t* qs = out.qs.data() + t * out.qs_stride;
  float* scale = out.scale.data() + t * out.scale_stride;
  const int64_t block = activation_block_elements(out.type);
  const int64_t num_blocks = out.cols / block;
  for (int64_t b = 0; b < num_blocks; ++b) {
    const int8_t* q = nullptr;
    switch (out.type) {
      case ActivationBlockType::Q8_0: {
        const auto& blk = static_cast<const BlockQ8_0*>(blocks)[b];
        q = blk.qs;
        scale[b] = half_to_float(blk.d);
        break;
      }
      case ActivationBlockType::Q8_1: {
        const auto& blk = static_cast<const BlockQ8_1*>(blocks)[b];
        q = blk.qs;
        scale[b] = half_to_float(blk.d);
        out.sum[static_cast<size_t>(t * out.scale_stride + b)] = half_to_float(blk.s);
        break;
      }
      case ActivationBlockType::Q8_K: {
        const auto& blk = static_cast<const BlockQ8_K*>(blocks)[b];
        q = blk.qs;
        scale[b] = blk.d;
        std::memcpy(out.bsum.data() + t * (out.cols / 16) + b * 16, blk.bsums, sizeof blk.bsums);
        break;
      }
    }
    int8_t* dst = qs + b * block;
    if (out.is_offset_u8) {
      for (int64_t i = 0; i < block; ++i) dst[i] = static_cast<int8_t>(q[i] ^ 0x80);
    } else {
      std::memcpy(dst, q, static_cast<size_t>(block));
    }
  }
  // Padding: zero values (the matching weights are zero too) and zero scales.
  std::fill(qs + out.cols, qs + out.qs_stride, int8_t{0});
  std::fill(scale + num_blocks, scale + out.scale_stride, 0.0f);
  if (out.type == ActivationBlockType::Q8_1) {
    float* sum = out.sum.data() + t * out.scale_stride;
    std::fill(sum + num_blocks, sum + out.scale_stride, 0.0f);
  }
}

void quantize_activations(const float* x, int64_t t_begin, int64_t t_end,
                          QuantizedActivations& out) {
  const int64_t cols = out.cols;
  thread_local std::vector<BlockQ8_K> blocks;  // big enough for any activation type
  blocks.resize(static_cast<size_t>(cols / kBlock32 + 1));
  for (int64_t t = t_begin; t < t_end; ++t) {
    const float* row = x + t * cols;
    switch (out.type) {
      case ActivationBlockType::Q8_0:
        quantize_row_q8_0(row, reinterpret_cast<BlockQ8_0*>(blocks.data()), cols);
        break;
      case ActivationBlockType::Q8_1:
        quantize_row_q8_1(row, reinterpret_cast<BlockQ8_1*>(blocks.data()), cols);
        break;
      case ActivationBlockType::Q8_K:
        quantize_row_q8_K(row, blocks.data(), cols);
        break;
    }
    store_activation_blocks(blocks.data(), t, out);
  }
}

void unpack_weight_rows(DType dtype, const uint8_t* rows, size_t row_bytes, int num_rows,
                        int64_t cols, UnpackedWeights& out) {
  out.dtype = dtype;
  out.family = quant_family(dtype);
  const int64_t block = dtype_traits(dtype).block_elements;
  assert(cols % block == 0);  // callers validated the row length
  const int64_t num_blocks = cols / block;
  const bool super256 = is_super256(out.family);
  out.num_rows = num_rows;
  out.cols = cols;
  out.w_stride = round_up(cols, kQuantChunk);
  out.scale_stride = scale_stride_for(num_blocks);
  out.w.resize(static_cast<size_t>(num_rows * out.w_stride));
  out.lane_scale.resize(super256 ? static_cast<size_t>(num_rows * out.w_stride / 4) : 0);
  out.d.resize(static_cast<size_t>(num_rows * out.scale_stride));
  out.m.resize(has_min(out.family) ? static_cast<size_t>(num_rows * out.scale_stride) : 0);
  out.mins.resize(out.family == QuantFamily::Super256Min ? static_cast<size_t>(num_rows * cols / 16)
                                                         : 0);
  for (int r = 0; r < num_rows; ++r) {
    const RowOut row{
        out.w.data() + r * out.w_stride,
        super256 ? out.lane_scale.data() + r * (out.w_stride / 4) : nullptr,
        out.d.data() + r * out.scale_stride,
        has_min(out.family) ? out.m.data() + r * out.scale_stride : nullptr,
        out.family == QuantFamily::Super256Min ? out.mins.data() + r * (cols / 16) : nullptr,
    };
    unpack_row(dtype, rows + static_cast<size_t>(r) * row_bytes, cols, row);
    // Padding: zero weights and scales, so that padded lanes add exact zeros.
    std::fill(row.w + cols, row.w + out.w_stride, int8_t{0});
    std::fill(row.d + num_blocks, row.d + out.scale_stride, 0.0f);
    if (row.m) std::fill(row.m + num_blocks, row.m + out.scale_stride, 0.0f);
  }
}

}  // namespace sluice
