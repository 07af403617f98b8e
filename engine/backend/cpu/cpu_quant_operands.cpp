#include "engine/backend/cpu/cpu_quant_operands.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>
#include <vector>

#include "engine/backend/cpu/cpu_math.h"
#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

using namespace quant;  // the block structs and sizes

int64_t round_up(int64_t n, int64_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

int64_t scale_stride_for(int64_t num_blocks) {
  return round_up(num_blocks, 2);
}

template <typename Block>
const Block* blocks_of(const uint8_t* row) {
  return reinterpret_cast<const Block*>(row);
}

// One decoded row: where the unpacker writes. Passed by value and restrict-qualified: the
// unpackers store bytes, which may alias anything, and would otherwise reload every pointer
// after every store.
struct RowOut {
  int8_t* __restrict w;            // [cols] centred values
  int8_t* __restrict group_scale;  // [cols / 16] (super-block types)
  float* __restrict d;             // [blocks]
  float* __restrict m;             // [blocks] (types with a min)
  int8_t* __restrict mins;         // [cols / 16] (super-block types with a min)
};

// ---- blocks of 32: element j < 16 is the low nibble of qs[j], j >= 16 the high nibble of
// qs[j - 16]; the fifth bit of element j is bit j of qh (bit j % 8 of qh[j / 8]).

// kBitBytes[b] has byte i = 1 when bit i of b is set: eight bits spread to eight bytes.
constexpr auto kBitBytes = [] {
  std::array<uint64_t, 256> table{};
  for (int b = 0; b < 256; ++b) {
    for (int i = 0; i < 8; ++i) {
      if (b >> i & 1) table[b] |= uint64_t{1} << (8 * i);
    }
  }
  return table;
}();

// Eight bytes at a time in 64-bit registers: compilers turn the per-byte loop into slow byte
// inserts, this stays ~20 operations per block on any CPU.
template <typename Block, int kOffset, bool kHasMin, bool kHasHighBit>
SLUICE_ALWAYS_INLINE void unpack_nibble_blocks(const uint8_t* src, int64_t cols, RowOut out) {
  constexpr uint64_t kNibbles = 0x0f0f0f0f0f0f0f0full;
  constexpr uint64_t kHighBits = 0x8080808080808080ull;
  constexpr uint64_t kOffsets = 0x0101010101010101ull * kOffset;
  const Block* blocks = blocks_of<Block>(src);
  for (int64_t b = 0; b < cols / kBlock32; ++b) {
    const Block& blk = blocks[b];
    uint64_t q[2];
    std::memcpy(q, blk.qs, sizeof q);
    // Elements 0-7, 8-15 (low nibbles), 16-23, 24-31 (high nibbles).
    uint64_t v[4] = {q[0] & kNibbles, q[1] & kNibbles, (q[0] >> 4) & kNibbles,
                     (q[1] >> 4) & kNibbles};
    for (int k = 0; k < 4; ++k) {
      if constexpr (kHasHighBit) v[k] |= kBitBytes[blk.qh[k]] << 4;
      // v - kOffset in every byte without borrows: each byte is below 0x80, so (v | 0x80) - off
      // stays in its byte, and flipping 0x80 back gives the two's complement result.
      if constexpr (kOffset != 0) v[k] = ((v[k] | kHighBits) - kOffsets) ^ kHighBits;
      // One store per word: one 32-byte copy of the four would wait on four 8-byte stores.
      std::memcpy(out.w + b * kBlock32 + 8 * k, &v[k], sizeof v[k]);
    }
    out.d[b] = half_to_float(blk.d);
    if constexpr (kHasMin) out.m[b] = half_to_float(blk.m);
  }
}

SLUICE_ALWAYS_INLINE void unpack_q8_0(const uint8_t* src, int64_t cols, RowOut out) {
  const BlockQ8_0* blocks = blocks_of<BlockQ8_0>(src);
  for (int64_t b = 0; b < cols / kBlock32; ++b) {
    std::memcpy(out.w + b * kBlock32, blocks[b].qs, kBlock32);
    out.d[b] = half_to_float(blocks[b].d);
  }
}

// MXFP4: each nibble indexes the doubled FP4 values (integers in [-12, 12]); the block's scale
// 2^(e - 128) is d, so the product is a Block32 one like Q4_0's.
SLUICE_ALWAYS_INLINE void unpack_mxfp4(const uint8_t* src, int64_t cols, RowOut out) {
  const BlockMXFP4* blocks = blocks_of<BlockMXFP4>(src);
  for (int64_t b = 0; b < cols / kBlock32; ++b) {
    const BlockMXFP4& blk = blocks[b];
    int8_t* w = out.w + b * kBlock32;
    for (int j = 0; j < kBlock32 / 2; ++j) {
      w[j] = kMxfp4Values[blk.qs[j] & 0x0f];
      w[j + kBlock32 / 2] = kMxfp4Values[blk.qs[j] >> 4];
    }
    out.d[b] = mxfp4_scale(blk.e);
  }
}

// ---- super-blocks of 256. Groups of 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K) elements share
// an integer scale.

// Q2_K and Q3_K: each 32 bytes of qs hold four 32-element runs (shifted by 0, 2, 4, 6); Q3_K's
// third bit of element e is bit e / 32 of hmask[e % 32], stored inverted (clear means minus 4).
template <bool kIsQ3>
SLUICE_ALWAYS_INLINE void unpack_two_bit_values(const uint8_t* qs, const uint8_t* hmask,
                                                int8_t* w) {
  for (int half = 0; half < 2; ++half) {
    for (int run = 0; run < 4; ++run) {
      const int shift = 2 * run;
      int8_t* out = w + 128 * half + 32 * run;
      for (int l = 0; l < 32; ++l) {
        int q = (qs[32 * half + l] >> shift) & 3;
        if constexpr (kIsQ3) q += 4 * ((hmask[l] >> (4 * half + run)) & 1) - 4;
        out[l] = static_cast<int8_t>(q);
      }
    }
  }
}

SLUICE_ALWAYS_INLINE void unpack_q2_k(const uint8_t* src, int64_t cols, RowOut out) {
  const BlockQ2_K* blocks = blocks_of<BlockQ2_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ2_K& blk = blocks[b];
    unpack_two_bit_values<false>(blk.qs, nullptr, out.w + b * kBlockK);
    for (int g = 0; g < 16; ++g) {
      out.group_scale[b * 16 + g] = static_cast<int8_t>(blk.scales[g] & 0x0f);
      out.mins[b * 16 + g] = static_cast<int8_t>(blk.scales[g] >> 4);
    }
    out.d[b] = half_to_float(blk.d);
    out.m[b] = half_to_float(blk.dmin);
  }
}

SLUICE_ALWAYS_INLINE void unpack_q3_k(const uint8_t* src, int64_t cols, RowOut out) {
  const BlockQ3_K* blocks = blocks_of<BlockQ3_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ3_K& blk = blocks[b];
    unpack_two_bit_values<true>(blk.qs, blk.hmask, out.w + b * kBlockK);
    // Sixteen 6-bit scales: low 4 bits in bytes 0-7 (low nibbles, then high nibbles), high 2
    // bits in bytes 8-11; stored with a bias of 32.
    for (int g = 0; g < 16; ++g) {
      const int low = g < 8 ? blk.scales[g] & 0x0f : blk.scales[g - 8] >> 4;
      const int high = (blk.scales[8 + g % 4] >> (2 * (g / 4))) & 3;
      out.group_scale[b * 16 + g] = static_cast<int8_t>((low | high << 4) - 32);
    }
    out.d[b] = half_to_float(blk.d);
  }
}

// Q4_K and Q5_K: 64-element chunk c takes the low nibbles of qs[32c..32c+31], then the high
// ones; Q5_K's fifth bit of element e is bit e / 32 of qh[e % 32].
template <typename Block, bool kHasHighBit>
SLUICE_ALWAYS_INLINE void unpack_q45_k(const uint8_t* src, int64_t cols, RowOut out) {
  const Block* blocks = blocks_of<Block>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const Block& blk = blocks[b];
    for (int c = 0; c < 4; ++c) {
      int8_t* low = out.w + b * kBlockK + 64 * c;
      int8_t* high = low + 32;
      for (int l = 0; l < 32; ++l) {
        int q_low = blk.qs[32 * c + l] & 0x0f;
        int q_high = blk.qs[32 * c + l] >> 4;
        if constexpr (kHasHighBit) {
          q_low |= ((blk.qh[l] >> (2 * c)) & 1) << 4;
          q_high |= ((blk.qh[l] >> (2 * c + 1)) & 1) << 4;
        }
        low[l] = static_cast<int8_t>(q_low);
        high[l] = static_cast<int8_t>(q_high);
      }
    }
    unpack_scales_mins_k4(blk.scales, out.group_scale + b * 16, out.mins + b * 16);
    out.d[b] = half_to_float(blk.d);
    out.m[b] = half_to_float(blk.dmin);
  }
}

// Q6_K: each 128-element half has 64 bytes of ql and 32 of qh; quarter k of the half takes
// ql[l + 32 * (k & 1)] (low nibble for k < 2, high for k >= 2) and bits 2k, 2k+1 of qh[l].
SLUICE_ALWAYS_INLINE void unpack_q6_k(const uint8_t* src, int64_t cols, RowOut out) {
  const BlockQ6_K* blocks = blocks_of<BlockQ6_K>(src);
  for (int64_t b = 0; b < cols / kBlockK; ++b) {
    const BlockQ6_K& blk = blocks[b];
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk.ql + 64 * half;
      const uint8_t* qh = blk.qh + 32 * half;
      int8_t* w = out.w + b * kBlockK + 128 * half;
      for (int l = 0; l < 32; ++l) {
        w[l] = static_cast<int8_t>(((ql[l] & 0x0f) | (qh[l] & 3) << 4) - 32);
        w[l + 32] = static_cast<int8_t>(((ql[l + 32] & 0x0f) | ((qh[l] >> 2) & 3) << 4) - 32);
        w[l + 64] = static_cast<int8_t>(((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32);
        w[l + 96] = static_cast<int8_t>(((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32);
      }
    }
    std::memcpy(out.group_scale + b * 16, blk.scales, 16);
    out.d[b] = half_to_float(blk.d);
  }
}

SLUICE_CPU_CLONES void unpack_row(DType dtype, const uint8_t* src, int64_t cols, RowOut out) {
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
    case DType::MXFP4:
      return unpack_mxfp4(src, cols, out);
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
      {DType::Q4_0, QuantFamily::Block32, ActivationBlockType::Q8_0, true},
      {DType::Q4_1, QuantFamily::Block32Min, ActivationBlockType::Q8_1, false},
      {DType::Q5_0, QuantFamily::Block32, ActivationBlockType::Q8_0, true},
      {DType::Q5_1, QuantFamily::Block32Min, ActivationBlockType::Q8_1, false},
      {DType::Q8_0, QuantFamily::Block32, ActivationBlockType::Q8_0, true},
      {DType::MXFP4, QuantFamily::Block32, ActivationBlockType::Q8_0, true},
      {DType::Q2_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K, false},
      {DType::Q3_K, QuantFamily::Super256, ActivationBlockType::Q8_K, true},
      {DType::Q4_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K, false},
      {DType::Q5_K, QuantFamily::Super256Min, ActivationBlockType::Q8_K, false},
      {DType::Q6_K, QuantFamily::Super256, ActivationBlockType::Q8_K, true},
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

void gather_activations(const QuantizedActivations& src, const int32_t* rows, int64_t count,
                        QuantizedActivations& out) {
  out.type = src.type;
  out.is_offset_u8 = src.is_offset_u8;
  out.num_tokens = count;
  out.cols = src.cols;
  out.qs_stride = src.qs_stride;
  out.scale_stride = src.scale_stride;
  const int64_t bsum_stride = src.bsum.size() == 0 ? 0 : src.cols / 16;
  out.qs.resize(static_cast<size_t>(count * out.qs_stride));
  out.scale.resize(static_cast<size_t>(count * out.scale_stride));
  out.sum.resize(src.sum.size() == 0 ? 0 : static_cast<size_t>(count * out.scale_stride));
  out.bsum.resize(static_cast<size_t>(count * bsum_stride));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = rows[i];
    std::memcpy(out.qs.data() + i * out.qs_stride, src.qs.data() + r * src.qs_stride,
                static_cast<size_t>(src.qs_stride));
    std::memcpy(out.scale.data() + i * out.scale_stride, src.scale.data() + r * src.scale_stride,
                sizeof(float) * static_cast<size_t>(src.scale_stride));
    if (src.sum.size() != 0) {
      std::memcpy(out.sum.data() + i * out.scale_stride, src.sum.data() + r * src.scale_stride,
                  sizeof(float) * static_cast<size_t>(src.scale_stride));
    }
    if (bsum_stride != 0) {
      std::memcpy(out.bsum.data() + i * bsum_stride, src.bsum.data() + r * bsum_stride,
                  sizeof(int16_t) * static_cast<size_t>(bsum_stride));
    }
  }
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
  out.group_scale.resize(super256 ? static_cast<size_t>(num_rows * cols / 16) : 0);
  out.d.resize(static_cast<size_t>(num_rows * out.scale_stride));
  out.m.resize(has_min(out.family) ? static_cast<size_t>(num_rows * out.scale_stride) : 0);
  out.mins.resize(out.family == QuantFamily::Super256Min ? static_cast<size_t>(num_rows * cols / 16)
                                                         : 0);
  for (int r = 0; r < num_rows; ++r) {
    const RowOut row{
        out.w.data() + r * out.w_stride,
        super256 ? out.group_scale.data() + r * (cols / 16) : nullptr,
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
