#include "engine/backend/cpu/cpu_quant_interleave.h"

#include <cassert>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "engine/backend/cpu/cpu_quant_dot_simd.h"
#include "engine/core/quant_blocks.h"

namespace sluice {

namespace {

// A run of equal words of a block (2 or 4 bytes each) and where the tile keeps them: word j of
// row r at tile + at + (j * 16 + r) * word_bytes.
struct Field {
  int from;  // byte offset in the block
  int words;
  int word_bytes;
  int at;          // byte offset in the tile
  bool flip_sign;  // stored with each byte's top bit flipped (q + 128 for int8 q)
};

constexpr Field kQ4KFields[] = {
    {0, 1, 4, 0, false},     // d | dmin << 16
    {4, 3, 4, 64, false},    // the 12 bytes of scales and mins
    {16, 32, 4, 256, false}  // qs: chunk c's word k is word 8c + k
};
constexpr Field kQ6KFields[] = {
    {0, 32, 4, 0, false},       // ql
    {128, 16, 4, 2048, false},  // qh
    {192, 4, 4, 3072, false},   // the 16 int8 scales
    {208, 1, 2, 3328, false}    // d
};
constexpr Field kQ8_0Fields[] = {
    {0, 1, 2, 0, false},  // d
    {2, 8, 4, 32, true}   // qs + 128
};

std::span<const Field> fields_of(DType dtype) {
  switch (dtype) {
    case DType::Q4_K:
      return kQ4KFields;
    case DType::Q6_K:
      return kQ6KFields;
    case DType::Q8_0:
      return kQ8_0Fields;
    default:
      return {};
  }
}

size_t block_bytes(DType dtype) {
  return dtype_num_bytes(dtype, interleaved_tile_cols(dtype));
}

// Copies f's words of the sixteen blocks (block r at blocks + r * stride) into the tile;
// kWordBytes a constant so that every copy is one load and one store.
template <int kWordBytes>
void copy_field(const Field& f, const uint8_t* blocks, size_t stride, uint8_t* tile) {
  using Word = std::conditional_t<kWordBytes == 4, uint32_t, uint16_t>;
  const auto mask = static_cast<Word>(f.flip_sign ? 0x80808080u : 0u);
  for (int j = 0; j < f.words; ++j) {
    for (int r = 0; r < kInterleaveRows; ++r) {
      Word word;
      std::memcpy(&word, blocks + static_cast<size_t>(r) * stride + f.from + j * kWordBytes,
                  kWordBytes);
      word = static_cast<Word>(word ^ mask);
      std::memcpy(tile + f.at + (j * kInterleaveRows + r) * kWordBytes, &word, kWordBytes);
    }
  }
}

// The inverse of copy_field: f's words from the tile back into the sixteen blocks.
template <int kWordBytes>
void restore_field(const Field& f, const uint8_t* tile, uint8_t* blocks, size_t stride) {
  using Word = std::conditional_t<kWordBytes == 4, uint32_t, uint16_t>;
  const auto mask = static_cast<Word>(f.flip_sign ? 0x80808080u : 0u);
  for (int j = 0; j < f.words; ++j) {
    for (int r = 0; r < kInterleaveRows; ++r) {
      Word word;
      std::memcpy(&word, tile + f.at + (j * kInterleaveRows + r) * kWordBytes, kWordBytes);
      word = static_cast<Word>(word ^ mask);
      std::memcpy(blocks + static_cast<size_t>(r) * stride + f.from + j * kWordBytes, &word,
                  kWordBytes);
    }
  }
}

}  // namespace

bool has_interleaved_kernel(DType dtype, QuantKernelIsa isa) {
  if (!SLUICE_QUANT_X86) return false;
  return isa != QuantKernelIsa::Scalar && !fields_of(dtype).empty();
}

int64_t interleaved_tile_cols(DType dtype) {
  return dtype == DType::Q8_0 ? quant::kBlock32 : quant::kBlockK;
}

size_t interleaved_tile_bytes(DType dtype) {
  return kInterleaveRows * block_bytes(dtype);
}

size_t interleaved_bytes(DType dtype, int64_t num_rows, int64_t cols) {
  return static_cast<size_t>(num_rows / kInterleaveRows) * static_cast<size_t>(kInterleaveRows) *
         dtype_num_bytes(dtype, cols);
}

void interleave_rows(DType dtype, const uint8_t* rows, size_t row_bytes, int64_t num_rows,
                     int64_t cols, uint8_t* out) {
  const std::span<const Field> fields = fields_of(dtype);
  assert(!fields.empty() && cols % interleaved_tile_cols(dtype) == 0);
  const int64_t num_tiles = cols / interleaved_tile_cols(dtype);
  const size_t tile_bytes = interleaved_tile_bytes(dtype), in_bytes = block_bytes(dtype);
  for (int64_t g = 0; g < num_rows / kInterleaveRows; ++g) {
    for (int64_t i = 0; i < num_tiles; ++i) {
      const uint8_t* blocks = rows + static_cast<size_t>(g * kInterleaveRows) * row_bytes +
                              static_cast<size_t>(i) * in_bytes;
      uint8_t* tile = out + static_cast<size_t>(g * num_tiles + i) * tile_bytes;
      for (const Field& f : fields) {
        if (f.word_bytes == 4) {
          copy_field<4>(f, blocks, row_bytes, tile);
        } else {
          copy_field<2>(f, blocks, row_bytes, tile);
        }
      }
    }
  }
}

void restore_group_rows(DType dtype, const uint8_t* group_tiles, int64_t cols, uint8_t* rows,
                        size_t row_bytes) {
  const std::span<const Field> fields = fields_of(dtype);
  assert(!fields.empty());
  const int64_t num_tiles = cols / interleaved_tile_cols(dtype);
  const size_t tile_bytes = interleaved_tile_bytes(dtype), out_bytes = block_bytes(dtype);
  for (int64_t i = 0; i < num_tiles; ++i) {
    const uint8_t* tile = group_tiles + static_cast<size_t>(i) * tile_bytes;
    uint8_t* blocks = rows + static_cast<size_t>(i) * out_bytes;
    for (const Field& f : fields) {
      if (f.word_bytes == 4) {
        restore_field<4>(f, tile, blocks, row_bytes);
      } else {
        restore_field<2>(f, tile, blocks, row_bytes);
      }
    }
  }
}

void pack_panel_from_tiles(DType dtype, const uint8_t* group_tiles, int64_t cols, QuantPanel& out) {
  assert(!fields_of(dtype).empty() && has_quant_panel_kernel(QuantKernelIsa::Avx512Vnni));
#if SLUICE_QUANT_X86
  pack_panel_from_tiles_avx512_vnni(dtype, group_tiles, cols, out);
#else
  (void)dtype, (void)group_tiles, (void)cols, (void)out;
#endif
}

int interleaved_max_tokens(DType dtype, QuantKernelIsa isa) {
  // AVX2 (no panels; 2 threads of a Zen 5 VM under SLUICE_CPU_KERNELS=avx2, 5632 x 2048
  // matrices from memory, against the file's rows): Q4_K's and Q8_0's tiles are ahead at every
  // count (Q4_K 1.4-1.5x at 1-8 tokens, 1.5-2x at 16-64, 1.2x at 128-512; Q8_0 1.3-1.5x at one
  // token, 2-2.6x at 2-16, 1.2-1.5x at 64-512), Q6_K's up to 32 tokens (1.2-1.35x), level at 64
  // (0.94-1.07x) and behind past it (512 tokens 0.87x), where its rows are restored from the
  // tiles for the row kernels (the restore costs 4-11% at 33-128 tokens).
  if (isa == QuantKernelIsa::Avx2) {
    return dtype == DType::Q6_K ? 64 : std::numeric_limits<int>::max();
  }
  // Past these counts the panels packed from the tiles are faster (2 threads of a Zen 5 VM, one
  // 5632 x 2048 matrix from memory). Q4_K: eight tokens at a time over a group's tiles while they
  // sit in L1, as the row kernel. Q6_K and Q8_0 take a float step (Q6_K a 32-bit multiply) per
  // token and group or block that the panels share between tokens, yet the tiles still beat the
  // panels at 4-8 tokens (Q6_K 1.35-1.9x, Q8_0 1.05-1.25x); past 8, Q6_K's stay level or ahead
  // (9 tokens 1.17x, 12-16 1.04x) and Q8_0's level or behind (12-16 tokens 0.97-0.99x).
  switch (dtype) {
    case DType::Q4_K:
      return 32;
    case DType::Q6_K:
      return 16;
    default:
      return 8;
  }
}

void quant_interleaved_rows(DType dtype, const uint8_t* tiles, int64_t group_begin,
                            int64_t group_end, int64_t cols,
                            const QuantizedActivations& activations, float* y, int64_t ldy,
                            QuantKernelIsa isa) {
  assert(has_interleaved_kernel(dtype, isa));
  assert(activations.num_tokens >= 1 &&
         activations.num_tokens <= interleaved_max_tokens(dtype, isa));
  assert(activations.cols == cols && !activations.is_offset_u8);
#if SLUICE_QUANT_X86
  if (isa == QuantKernelIsa::Avx2) {
    quant_interleaved_rows_avx2(dtype, tiles, group_begin, group_end, cols, activations, y, ldy);
    return;
  }
  quant_interleaved_rows_avx512_vnni(dtype, tiles, group_begin, group_end, cols, activations, y,
                                     ldy);
#else
  (void)dtype, (void)tiles, (void)group_begin, (void)group_end, (void)cols, (void)activations;
  (void)y, (void)ldy;
#endif
}

}  // namespace sluice
