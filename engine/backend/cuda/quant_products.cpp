#include "engine/backend/cuda/quant_products.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <functional>
#include <utility>

#include "engine/backend/cuda/cuda_buffer.h"
#include "engine/backend/cuda/cuda_check.h"
#include "engine/backend/cuda/cuda_types.h"
#include "engine/backend/cuda/stream_timer.h"
#include "kernels/dequantize.cuh"
#include "kernels/quant_linear.cuh"

namespace sluice {

namespace {

bool is_quantized(const CudaMatrixRun& run) {
  return run.format != kernels::QuantFormat::Dense;
}

// Calls fn(matrix, name) for every matrix a step multiplies: each layer's, its experts', the
// LM head.
void for_each_product_matrix(const CudaWeights& weights, int num_layers,
                             const std::function<void(const CudaMatrix&, const char*)>& fn) {
  for (int l = 0; l < num_layers; ++l) {
    const CudaLayerWeights& layer = weights.layer(l);
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role) || weight_kind(role) != WeightKind::Matrix) continue;
      if (!layer.matrices[role].empty()) fn(layer.matrices[role], weight_role_name(role));
    }
    for (const CudaMatrix& m : layer.experts.gate_up) fn(m, "expert gate|up");
    for (const CudaMatrix& m : layer.experts.down) fn(m, "expert down");
  }
  if (!weights.lm_head().empty()) fn(weights.lm_head(), "output");
}

#ifndef SLUICE_KERNEL_EMULATOR
constexpr int kProductWarmups = 2;
constexpr int kProductRuns = 5;
constexpr int kGemvCounts[] = {1, 2, 4, 8, 16};
constexpr int kTileCounts[] = {32, 128, 512};
constexpr int kMostTokens = 512;
constexpr int kMmqProbeTokens = 128;

#endif

}  // namespace

bool QuantProducts::takes_quant_linear(int num_tokens) const {
  return num_tokens <= gemv_max_tokens ||
         (num_tokens > kernels::kQuantGemvMaxTokens && num_tokens <= tiles_max_tokens);
}

size_t quant_scratch_bytes(const CudaWeights& weights, size_t element_bytes, size_t max_bytes) {
  size_t largest = 0;
  size_t widest_row = 0;
  // Layers are counted by what the weights hold: layer(l) exists for every layer of the model.
  const auto visit = [&](const CudaMatrix& m, const char*) {
    for (const CudaMatrixRun& run : m.runs) {
      if (!is_quantized(run)) continue;
      const size_t row = static_cast<size_t>(m.cols) * element_bytes;
      largest = std::max(largest, row * static_cast<size_t>(run.rows));
      widest_row = std::max(widest_row, row);
    }
  };
  for_each_product_matrix(weights, weights.num_layers(), visit);
  if (largest == 0) return 0;
  return std::max(std::min(largest, max_bytes), widest_row);
}

size_t quant_q8_bytes(const CudaWeights& weights, int tokens) {
  int widest = 0;
  for_each_product_matrix(weights, weights.num_layers(), [&](const CudaMatrix& m, const char*) {
    for (const CudaMatrixRun& run : m.runs) {
      if (is_quantized(run)) widest = std::max(widest, m.cols);
    }
  });
  return widest == 0
             ? 0
             : kernels::q8_rows_bytes(std::max(tokens, kernels::kQuantInt8GemvMaxTokens), widest);
}

void dequantized_product(const CublasGemm& gemm, ActivationDType dtype, const void* x,
                         int x_row_stride, const CudaMatrix& w, void* y, cudaDataType y_type,
                         int num_tokens, void* scratch, size_t scratch_bytes, cudaStream_t stream) {
  const cudaDataType ab_type = cuda_data_type(dtype);
  const size_t y_element_bytes = y_type == CUDA_R_32F ? 4 : 2;
  const size_t row_bytes = static_cast<size_t>(w.cols) * activation_element_bytes(dtype);
  const int chunk_rows = static_cast<int>(std::max<size_t>(1, scratch_bytes / row_bytes));
  auto* y_bytes = static_cast<uint8_t*>(y);
  int first_row = 0;
  for (const CudaMatrixRun& run : w.runs) {
    uint8_t* y_run = y_bytes + static_cast<size_t>(first_row) * y_element_bytes;
    if (!is_quantized(run)) {
      gemm.linear(x, run.data, y_run, num_tokens, w.cols, run.rows, ab_type, y_type, x_row_stride,
                  w.rows);
    } else {
      if (!scratch || scratch_bytes < row_bytes)
        fail("the dequantized product of a ", w.rows, " x ", w.cols,
             " matrix has no scratch for a row");
      for (int r = 0; r < run.rows; r += chunk_rows) {
        const int n = std::min(chunk_rows, run.rows - r);
        const auto* blocks = static_cast<const uint8_t*>(run.data) + run.row_bytes * r;
        visit_activation_type(dtype, [&](auto tag) {
          using T = typename decltype(tag)::type;
          SLUICE_KERNEL_CHECK(kernels::dequantize<T>(run.format, blocks, static_cast<T*>(scratch),
                                                     static_cast<int64_t>(n) * w.cols, stream));
        });
        gemm.linear(x, scratch, y_run + static_cast<size_t>(r) * y_element_bytes, num_tokens,
                    w.cols, n, ab_type, y_type, x_row_stride, w.rows);
      }
    }
    first_row += run.rows;
  }
}

QuantProducts make_quant_products(const CudaWeights& weights, const CublasGemm& gemm,
                                  ActivationDType dtype, const QuantProductsSetup& setup,
                                  QuantProductsBuffers& buffers, cudaStream_t stream) {
  const size_t bytes =
      quant_scratch_bytes(weights, activation_element_bytes(dtype), setup.scratch_max_bytes);
  if (bytes == 0) return {};
  buffers.scratch = DeviceBuffer(bytes, "the dequantized products' scratch");
  const int q8_tokens = std::max(setup.mmq_chunk_tokens, kernels::kQuantInt8GemvMaxTokens);
  buffers.q8 =
      DeviceBuffer(quant_q8_bytes(weights, q8_tokens), "the integer products' activations");
  QuantProducts base{.scratch = buffers.scratch.get(),
                     .scratch_bytes = bytes,
                     .int8_gemv = dtype != ActivationDType::F32,
                     .q8 = buffers.q8.get(),
                     .q8_bytes = buffers.q8.bytes(),
                     .q8_tokens = q8_tokens,
                     .mmq_parts = std::max(0, setup.mmq_parts),
                     .mmq_sms = std::max(1, setup.sms)};
  if (base.int8_gemv) {
    // The largest split any run in blocks takes for a chunk of tokens.
    for_each_product_matrix(weights, weights.num_layers(), [&](const CudaMatrix& m, const char*) {
      for (const CudaMatrixRun& run : m.runs) {
        if (!is_quantized(run) || !kernels::has_quant_mmq(run.format)) continue;
        base.mmq_partial_floats =
            std::max(base.mmq_partial_floats,
                     kernels::quant_mmq_partial_floats(run.rows, q8_tokens,
                                                       base.mmq_split(run.rows, m.cols).parts));
      }
    });
    if (base.mmq_partial_floats > 0) {
      buffers.mmq_partials =
          DeviceBuffer(base.mmq_partial_floats * sizeof(float), "the integer tiles' partial sums");
      base.mmq_partials = static_cast<float*>(buffers.mmq_partials.get());
    }
  }
  if (!setup.direct_max_tokens) {
    return choose_quant_products(weights, gemm, dtype, std::move(base), stream);
  }
  const int n = *setup.direct_max_tokens;
  base.gemv_max_tokens = std::min(n, kernels::kQuantGemvMaxTokens);
  base.tiles_max_tokens = n;
  base.reason = std::string(base.int8_gemv ? "integer" : "float") + " GEMV and tiles to " +
                std::to_string(n) + " tokens, else chunks widened for cuBLAS (asked for)";
  return base;
}

QuantProducts choose_quant_products(const CudaWeights& weights, const CublasGemm& gemm,
                                    ActivationDType dtype, QuantProducts base,
                                    cudaStream_t stream) {
  QuantProducts p = std::move(base);
#ifdef SLUICE_KERNEL_EMULATOR
  (void)weights, (void)gemm, (void)dtype, (void)stream;
  p.gemv_max_tokens = kernels::kQuantGemvMaxTokens;
  p.tiles_max_tokens = INT_MAX;
  p.reason = std::string(p.int8_gemv ? "integer" : "float") +
             " GEMV and tiles from their blocks (the emulator measures nothing)";
  return p;
#else
  // The run in blocks with the most elements among layer 0's matrices and the LM head.
  p.gemv_max_tokens = p.tiles_max_tokens = 0;
  const CudaMatrix* best = nullptr;
  const CudaMatrixRun* best_run = nullptr;
  const char* best_name = "";
  for_each_product_matrix(weights, 1, [&](const CudaMatrix& m, const char* name) {
    for (const CudaMatrixRun& run : m.runs) {
      if (!is_quantized(run)) continue;
      if (!best_run || static_cast<int64_t>(run.rows) * m.cols >
                           static_cast<int64_t>(best_run->rows) * best->cols) {
        best = &m, best_run = &run, best_name = name;
      }
    }
  });
  if (!best_run) {
    p.reason = "no matrix in blocks";
    return p;
  }
  const CudaMatrix one_run{.rows = best_run->rows, .cols = best->cols, .runs = {*best_run}};
  const size_t element_bytes = activation_element_bytes(dtype);
  DeviceBuffer x(static_cast<size_t>(kMostTokens) * one_run.cols * element_bytes,
                 "the quantized product measurement");
  DeviceBuffer y(static_cast<size_t>(kMostTokens) * one_run.rows * element_bytes,
                 "the quantized product measurement");
  SLUICE_CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), stream));
  const cudaDataType ab_type = cuda_data_type(dtype);
  // ms of n tokens' product from the blocks, with the tiles from tiles_min tokens.
  const auto time_direct = [&](int n, int tiles_min) {
    const int saved = p.tiles_min_tokens;
    p.tiles_min_tokens = tiles_min;
    float ms = 0.0f;
    visit_activation_type(dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      ms = time_calls_ms(stream, kProductWarmups, kProductRuns, [&] {
        direct_product<T, T>(&p, one_run, static_cast<const T*>(x.get()), 0,
                             static_cast<T*>(y.get()), n, stream);
      });
    });
    p.tiles_min_tokens = saved;
    return ms;
  };
  const auto time_dequantized = [&](int n) {
    return time_calls_ms(stream, kProductWarmups, kProductRuns, [&] {
      dequantized_product(gemm, dtype, x.get(), 0, one_run, y.get(), ab_type, n, p.scratch,
                          p.scratch_bytes, stream);
    });
  };
  std::string detail;
  const auto note = [&](int n, float direct_ms, const char* how, float dequantized_ms) {
    char part[80];
    std::snprintf(part, sizeof part, "%s%d: %.3f%s/%.3f", detail.empty() ? "" : ", ", n, direct_ms,
                  how, dequantized_ms);
    detail += part;
  };
  constexpr int kNoTiles = kernels::kQuantGemvMaxTokens + 1;
  // Which tiles: the integer ones or the 16-bit ones, whichever is faster at kMmqProbeTokens.
  std::string tiles_kind;
  if (p.int8_gemv && p.q8 && kernels::has_quant_mmq(best_run->format)) {
    p.mmq = false;
    const float wmma_ms = time_direct(kMmqProbeTokens, kNoTiles);
    p.mmq = true;
    const float mmq_ms = time_direct(kMmqProbeTokens, kNoTiles);
    p.mmq = mmq_ms < wmma_ms;
    char part[120];
    std::snprintf(part, sizeof part, "%s tiles (%d tokens: %.3f ms integer / %.3f ms 16-bit)",
                  p.mmq ? "integer" : "16-bit", kMmqProbeTokens, mmq_ms, wmma_ms);
    tiles_kind = part;
  }
  // 1-16 tokens: the GEMV, or the tiles from the first count at which they beat it (the GEMV's
  // time grows with the tokens, the tiles' hardly); the range ends where the dequantized way wins.
  for (const int n : kGemvCounts) {
    const float gemv_ms = p.tiles_min_tokens > n ? time_direct(n, kNoTiles) : 0.0f;
    const float tiles_ms = time_direct(n, 1);
    if (p.tiles_min_tokens > n && tiles_ms < gemv_ms) p.tiles_min_tokens = n;
    const bool tiles = p.tiles_min_tokens <= n;
    const float direct_ms = tiles ? tiles_ms : gemv_ms;
    const float dequantized_ms = time_dequantized(n);
    note(n, direct_ms, tiles ? " tiles" : "", dequantized_ms);
    if (!(direct_ms < dequantized_ms)) break;
    p.gemv_max_tokens = n;
  }
  for (const int n : kTileCounts) {
    const float direct_ms = time_direct(n, p.tiles_min_tokens);
    const float dequantized_ms = time_dequantized(n);
    note(n, direct_ms, "", dequantized_ms);
    if (!(direct_ms < dequantized_ms)) break;
    p.tiles_max_tokens = n == kTileCounts[std::size(kTileCounts) - 1] ? INT_MAX : n;
  }
  // The tiles' counts: from tiles_min_tokens when it is inside the GEMV's measured range, else
  // from past the GEMV; to the tiles' measured end (or the GEMV range's, when that is all).
  const bool small_tiles = p.tiles_min_tokens <= p.gemv_max_tokens;
  const int tiles_from = small_tiles ? p.tiles_min_tokens : kNoTiles;
  const int tiles_to = p.tiles_max_tokens > kernels::kQuantGemvMaxTokens ? p.tiles_max_tokens
                       : small_tiles                                     ? p.gemv_max_tokens
                                                                         : 0;
  const std::string tiles =
      tiles_to < tiles_from ? "none"
                            : "from " + std::to_string(tiles_from) + " to " +
                                  (tiles_to == INT_MAX ? "every count" : std::to_string(tiles_to));
  char head[224];
  std::snprintf(head, sizeof head,
                "%s GEMV to %d tokens, tiles %s, else chunks widened for cuBLAS (tokens: ms "
                "direct / widened on %s %d x %d: ",
                p.takes_int8_gemv(best_run->format, 1) ? "integer" : "float", p.gemv_tokens(),
                tiles.c_str(), best_name, one_run.rows, one_run.cols);
  p.reason = head + detail + ")";
  if (!tiles_kind.empty()) p.reason += "; " + tiles_kind;
  return p;
#endif
}

}  // namespace sluice
