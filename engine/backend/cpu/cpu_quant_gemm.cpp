#include "engine/backend/cpu/cpu_quant_gemm.h"

#include <algorithm>
#include <cassert>
#include <vector>

#include "engine/backend/cpu/cpu_quant_dot.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "engine/backend/cpu/cpu_quant_operands.h"
#include "engine/backend/cpu/cpu_quant_panel.h"

namespace sluice {

namespace {

// Tokens whose activations are read together by every row of a row block (64 tokens of a
// 5632-wide row are 360 KB: they stay in L2 while the rows pass over them).
constexpr int64_t kTokenBlock = 64;
// With more tokens than one token block, rows are unpacked this many bytes at a time so that a
// row block is unpacked once and serves every token block from L2.
constexpr int64_t kRowBlockBytes = int64_t{256} << 10;
// Rows are handed to the threads in this many chunks each, claimed as each thread finishes its
// last: two threads of one core (or one the host preempts) finish a decode step's products at
// different times, and a product group's types cost different time per byte.
constexpr int kChunksPerThread = 4;
// Work below this many multiply-adds per thread is not worth waking a thread for.
constexpr int64_t kMinWorkPerThread = int64_t{1} << 16;

int64_t unpacked_row_bytes(int64_t cols) {
  // The values, one float scale per 32 (or 256) and the group scales and mins per 16.
  return cols + cols / 8 + cols / 8 + 64;
}

void multiply_row_layout(const QuantMatrixView& w, const QuantizedActivations& act,
                         int64_t row_begin, int64_t row_end, float* y, int64_t ldy,
                         QuantKernelIsa isa) {
  const int64_t num_tokens = act.num_tokens;
  // Decoding a few sequences of Q4_K, Q6_K or Q8_0: sixteen rows at a time, read once. (One
  // token of Q8_0 keeps quant_direct_wide: in rows it is no faster, 9.4 against 9.8 ns per row
  // and 256 elements, within the noise.)
  if (has_direct_rows_kernel(w.dtype, isa) && num_tokens <= direct_rows_max_tokens(w.dtype, isa) &&
      !(num_tokens == 1 && has_direct_wide_kernel(w.dtype, isa))) {
    quant_direct_rows(w.dtype, w.data, w.row_bytes, row_begin, row_end, w.cols, act, y, ldy, isa);
    return;
  }
  // Few tokens: unpacking a row would cost more than the products that use it, so the kernel
  // decodes the rows in registers (the same bits), once per tile of tokens.
  if (num_tokens <= kQuantDirectMaxTokens && has_direct_quant_kernel(w.dtype, isa)) {
    int64_t r = row_begin;
    // One token (decoding one sequence): eight rows at a time where the version has the kernel.
    if (num_tokens == 1 && has_direct_wide_kernel(w.dtype, isa)) {
      for (; r + kQuantWideRows <= row_end; r += kQuantWideRows)
        quant_direct_wide(w.dtype, w.data + static_cast<size_t>(r) * w.row_bytes, w.row_bytes,
                          w.cols, act, 0, y + r, isa);
    }
    for (; r < row_end; r += kQuantTileRows) {
      const auto tile_rows = static_cast<int>(std::min<int64_t>(kQuantTileRows, row_end - r));
      for (int64_t t = 0; t < num_tokens; t += kQuantTileTokens) {
        const auto tile_tokens =
            static_cast<int>(std::min<int64_t>(kQuantTileTokens, num_tokens - t));
        quant_direct_tile(w.dtype, w.data + static_cast<size_t>(r) * w.row_bytes, w.row_bytes,
                          tile_rows, w.cols, act, t, tile_tokens, y + t * ldy + r, ldy, isa);
      }
    }
    return;
  }
  thread_local UnpackedWeights unpacked;
  // Many tokens: sixteen rows at a time are unpacked and interleaved into a panel that every
  // token then multiplies, one row per lane. (Interleaving costs more than it saves for few
  // tokens: 8 tokens take 1.6x as long from panels of Q4_K rows.)
  if (num_tokens > kQuantDirectMaxTokens && has_quant_panel_kernel(isa)) {
    thread_local QuantPanel panel;
    for (int64_t rb = row_begin; rb < row_end; rb += kQuantPanelRows) {
      const auto num_block_rows =
          static_cast<int>(std::min<int64_t>(kQuantPanelRows, row_end - rb));
      const uint8_t* rows = w.data + static_cast<size_t>(rb) * w.row_bytes;
      if (!pack_quant_panel_from_blocks(w.dtype, rows, w.row_bytes, num_block_rows, w.cols,
                                        panel)) {
        unpack_weight_rows(w.dtype, rows, w.row_bytes, num_block_rows, w.cols, unpacked);
        pack_quant_panel(unpacked, panel);
      }
      for (int64_t t = 0; t < num_tokens; t += kQuantPanelTokens) {
        const auto tile_tokens =
            static_cast<int>(std::min<int64_t>(kQuantPanelTokens, num_tokens - t));
        quant_panel_tile(panel, act, t, tile_tokens, y + t * ldy + rb, ldy);
      }
    }
    return;
  }
  int64_t block_rows = kQuantTileRows;
  if (num_tokens > kTokenBlock) {
    block_rows = std::max<int64_t>(kQuantTileRows, kRowBlockBytes / unpacked_row_bytes(w.cols) /
                                                       kQuantTileRows * kQuantTileRows);
  }
  for (int64_t rb = row_begin; rb < row_end; rb += block_rows) {
    const auto num_block_rows = static_cast<int>(std::min(block_rows, row_end - rb));
    unpack_weight_rows(w.dtype, w.data + static_cast<size_t>(rb) * w.row_bytes, w.row_bytes,
                       num_block_rows, w.cols, unpacked);
    for (int64_t tb = 0; tb < num_tokens; tb += kTokenBlock) {
      const int64_t tb_end = std::min(num_tokens, tb + kTokenBlock);
      for (int r = 0; r < num_block_rows; r += kQuantTileRows) {
        const int tile_rows = std::min(kQuantTileRows, num_block_rows - r);
        for (int64_t t = tb; t < tb_end; t += kQuantTileTokens) {
          const auto tile_tokens =
              static_cast<int>(std::min<int64_t>(kQuantTileTokens, tb_end - t));
          quant_dot_tile(unpacked, r, tile_rows, act, t, tile_tokens, y + t * ldy + rb + r, ldy,
                         isa);
        }
      }
    }
  }
}

// Activations stored as q + 128 where the kernels that will read them want so.
bool wants_offset(const QuantMatrixView& w, int64_t num_tokens, QuantKernelIsa isa) {
  return !uses_interleaved_kernels(w, num_tokens, isa) && wants_offset_activations(isa, w.dtype);
}

// Rows [row_begin, row_end) of w, whichever layout holds them. Preconditions: those of
// multiply_row_layout, row_begin a multiple of 16 where it falls among the interleaved rows,
// and act stored as wants_offset says.
void multiply_rows(const QuantMatrixView& w, const QuantizedActivations& act, int64_t row_begin,
                   int64_t row_end, float* y, int64_t ldy, QuantKernelIsa isa) {
  if (!w.interleaved) return multiply_row_layout(w, act, row_begin, row_end, y, ldy, isa);
  const int64_t grouped_end =
      std::clamp(w.rows / kInterleaveRows * kInterleaveRows, row_begin, row_end);
  assert(row_begin % kInterleaveRows == 0 || row_begin == grouped_end);
  const int64_t group_begin = row_begin / kInterleaveRows;
  const int64_t group_end = grouped_end / kInterleaveRows;
  const size_t group_bytes = static_cast<size_t>(kInterleaveRows) * w.row_bytes;
  QuantKernelIsa tail_isa = isa;
  if (uses_interleaved_kernels(w, act.num_tokens, isa)) {
    if (group_begin < group_end) {
      quant_interleaved_rows(w.dtype, w.interleaved, group_begin, group_end, w.cols, act, y, ldy,
                             isa);
    }
    // The rows past the tiles, with the signed activations: a version whose kernels take them
    // (every version gives the same bits).
    if (act.is_offset_u8 != wants_offset_activations(tail_isa, w.dtype))
      tail_isa = QuantKernelIsa::Avx2;
  } else if (has_quant_panel_kernel(isa)) {
    // More tokens than the interleaved kernels take (a prefill): each group's panel packed
    // straight from its tiles, then multiplied by every token.
    thread_local QuantPanel panel;
    for (int64_t g = group_begin; g < group_end; ++g) {
      pack_panel_from_tiles(w.dtype, w.interleaved + static_cast<size_t>(g) * group_bytes, w.cols,
                            panel);
      for (int64_t t = 0; t < act.num_tokens; t += kQuantPanelTokens) {
        const auto tile_tokens =
            static_cast<int>(std::min<int64_t>(kQuantPanelTokens, act.num_tokens - t));
        quant_panel_tile(panel, act, t, tile_tokens, y + t * ldy + g * kInterleaveRows, ldy);
      }
    }
  } else {
    // A kernel version without panels (tests on a CPU that has the tiles): each group's rows
    // restored from its tiles for the row kernels (the file's rows were handed back at load).
    thread_local std::vector<uint8_t> rows;
    rows.resize(group_bytes);
    QuantMatrixView group = w;
    group.data = rows.data();
    group.rows = kInterleaveRows;
    group.interleaved = nullptr;
    for (int64_t g = group_begin; g < group_end; ++g) {
      restore_group_rows(w.dtype, w.interleaved + static_cast<size_t>(g) * group_bytes, w.cols,
                         rows.data(), w.row_bytes);
      multiply_row_layout(group, act, 0, kInterleaveRows, y + g * kInterleaveRows, ldy, isa);
    }
  }
  if (grouped_end < row_end) multiply_row_layout(w, act, grouped_end, row_end, y, ldy, tail_isa);
}

}  // namespace

bool uses_interleaved_kernels(const QuantMatrixView& w, int64_t num_tokens, QuantKernelIsa isa) {
  return w.interleaved != nullptr && has_interleaved_kernel(w.dtype, isa) &&
         num_tokens <= interleaved_max_tokens(w.dtype, isa);
}

void quant_gemm(const QuantMatrixView& w, const float* x, int64_t num_tokens, float* y, int64_t ldy,
                ThreadPool& pool, QuantKernelIsa isa) {
  assert(has_quant_kernels(w.dtype));           // CpuMatrix routes only these here
  assert(dtype_row_is_valid(w.dtype, w.cols));  // the loader checked the row length
  assert(quant_kernel_isa_supported(isa));      // callers pick a supported version
  if (num_tokens <= 0 || w.rows <= 0) return;
  // The calling thread owns the quantized activations; the pool's threads fill and read them
  // through this reference (naming a thread_local inside the lambdas would give each thread its
  // own).
  thread_local QuantizedActivations calling_thread_activations;
  QuantizedActivations& act = calling_thread_activations;
  shape_activations(w.dtype, num_tokens, w.cols, wants_offset(w, num_tokens, isa), act);
  const int64_t min_tokens =
      std::max<int64_t>(1, kMinWorkPerThread / 16 / std::max<int64_t>(1, w.cols));
  pool.parallel_for(
      num_tokens, [&](int64_t begin, int64_t end) { quantize_activations(x, begin, end, act); },
      min_tokens);
  // Threads take whole groups of 16 rows (an interleaved matrix's tiles).
  const int64_t min_rows = std::max<int64_t>(
      kQuantTileRows, kMinWorkPerThread / std::max<int64_t>(1, num_tokens * w.cols));
  const int64_t num_units = (w.rows + kInterleaveRows - 1) / kInterleaveRows;
  pool.parallel_for(
      num_units,
      [&](int64_t begin, int64_t end) {
        multiply_rows(w, act, begin * kInterleaveRows, std::min(w.rows, end * kInterleaveRows), y,
                      ldy, isa);
      },
      (min_rows + kInterleaveRows - 1) / kInterleaveRows, kChunksPerThread);
}

void quant_gemm_group(std::span<const QuantProduct> products, ThreadPool& pool,
                      QuantKernelIsa isa) {
  assert(quant_kernel_isa_supported(isa));
  // The calling thread's activations, one per product, read by the pool's threads through
  // this reference (as in quant_gemm).
  thread_local std::vector<QuantizedActivations> calling_thread_activations;
  std::vector<QuantizedActivations>& acts = calling_thread_activations;
  if (acts.size() < products.size()) acts.resize(products.size());
  std::vector<int64_t> first_token(products.size() + 1, 0);  // of each product in one numbering
  // The product whose activations each reads (one stored as its kernels want them).
  std::vector<size_t> source(products.size());
  int64_t total_work = 0;
  for (size_t i = 0; i < products.size(); ++i) {
    const QuantProduct& p = products[i];
    assert(has_quant_kernels(p.w.dtype) && dtype_row_is_valid(p.w.dtype, p.w.cols));
    const bool offset = wants_offset(p.w, p.num_tokens, isa);
    assert(!p.activations || p.activations->is_offset_u8 == offset);
    source[i] = i;
    if (p.shares_activations_with >= 0) {
      const auto shared = static_cast<size_t>(p.shares_activations_with);
      if (wants_offset(products[shared].w, products[shared].num_tokens, isa) == offset)
        source[i] = source[shared];  // (an earlier product: its source is known)
    }
    const bool own = source[i] == i && !p.activations;
    if (own) shape_activations(p.w.dtype, p.num_tokens, p.w.cols, offset, acts[i]);
    first_token[i + 1] = first_token[i] + (own ? p.num_tokens : 0);
    total_work += p.num_tokens * p.w.rows * p.w.cols;
  }
  if (total_work == 0) return;
  pool.parallel_for(
      first_token.back(),
      [&](int64_t begin, int64_t end) {
        for (size_t i = 0; i < products.size(); ++i) {
          const int64_t b = std::max(begin, first_token[i]), e = std::min(end, first_token[i + 1]);
          if (b < e)
            quantize_activations(products[i].x, b - first_token[i], e - first_token[i], acts[i]);
        }
      },
      std::max<int64_t>(1, kMinWorkPerThread / 16 / std::max<int64_t>(1, products[0].w.cols)));

  // Row ranges of about equal work, several per thread, in whole panels of rows.
  struct Piece {
    size_t product;
    int64_t row_begin, row_end;
  };
  std::vector<Piece> pieces;
  const int64_t piece_work =
      std::max<int64_t>(kMinWorkPerThread, total_work / (8 * int64_t{pool.num_threads()}));
  for (size_t i = 0; i < products.size(); ++i) {
    const QuantProduct& p = products[i];
    if (p.num_tokens <= 0 || p.w.rows <= 0) continue;
    const int64_t unit = kQuantPanelRows;
    const int64_t rows = std::max<int64_t>(
        unit, piece_work / std::max<int64_t>(1, p.num_tokens * p.w.cols) / unit * unit);
    for (int64_t r = 0; r < p.w.rows; r += rows)
      pieces.push_back({i, r, std::min(p.w.rows, r + rows)});
  }
  pool.parallel_for(
      static_cast<int64_t>(pieces.size()),
      [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const Piece& piece = pieces[static_cast<size_t>(k)];
          const QuantProduct& p = products[piece.product];
          const QuantizedActivations& a =
              p.activations ? *p.activations : acts[source[piece.product]];
          multiply_rows(p.w, a, piece.row_begin, piece.row_end, p.y, p.ldy, isa);
        }
      },
      1, kChunksPerThread);
}

}  // namespace sluice
