#include "engine/backend/cpu_linear.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "engine/backend/cpu_gemm.h"
#include "engine/backend/cpu_quant_gemm.h"

namespace sluice {

namespace {

// Rows widened per tile when widening on the fly: ~4 MB of fp32 per tile.
int64_t tile_rows_for(int64_t cols) {
  return std::max<int64_t>(16, (int64_t{1} << 20) / std::max<int64_t>(cols, 1));
}

bool usable_in_place(const WeightTensor& w) {
  const size_t alignment = w.dtype == DType::F32 ? alignof(float) : alignof(uint16_t);
  return gemm_multiplies_in_place(w.dtype) && reinterpret_cast<uintptr_t>(w.data) % alignment == 0;
}

// Threads take rows in multiples of this, so that only the last tile of the matrix is partial.
constexpr int64_t kRowUnit = 16;

}  // namespace

CpuMatrix::CpuMatrix(const WeightTensor& weight, bool widen_now, ThreadPool& pool)
    : weight_(weight), rows_(weight.rows()), cols_(weight.cols()) {
  if (has_quant_kernels(weight.dtype)) return;  // stays in its blocks: multiply runs quant_gemm
  if (usable_in_place(weight)) {
    in_place_ = weight.data;
    in_place_type_ = weight.dtype;
    return;
  }
  if (widen_now) {
    widened_.resize(static_cast<size_t>(rows_ * cols_));
    pool.parallel_for(
        rows_,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r)
            dequantize_row(weight.dtype, weight.row(r), widened_.data() + r * cols_, cols_);
        },
        64);
    in_place_ = widened_.data();
  }
}

void CpuMatrix::row(int64_t r, float* out) const {
  if (!widened_.empty()) {
    std::memcpy(out, widened_.data() + r * cols_, static_cast<size_t>(cols_) * sizeof(float));
  } else {
    dequantize_row(weight_.dtype, weight_.row(r), out, cols_);
  }
}

void CpuMatrix::multiply(const float* x, int64_t num_tokens, float* y, ThreadPool& pool) const {
  assert(rows_ > 0);  // multiply on an empty matrix is a caller bug
  if (num_tokens <= 0) return;
  if (has_quant_kernels(weight_.dtype)) {
    const QuantMatrixView w{weight_.dtype, weight_.data, rows_, cols_, weight_.row_bytes()};
    quant_gemm(w, x, num_tokens, y, rows_, pool);
    return;
  }
  // Threads split the output features. gemm_nt_fixed_order sums every element in one order
  // whatever the rows or tokens beside it, so neither the split nor the batch changes a bit.
  // Chunks below ~64k multiply-adds are not worth a thread.
  const int64_t min_rows =
      std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(1, num_tokens * cols_));
  if (in_place_) {
    const auto* base = static_cast<const uint8_t*>(in_place_);
    const size_t row_bytes = dtype_num_bytes(in_place_type_, cols_);
    pool.parallel_for((rows_ + kRowUnit - 1) / kRowUnit,
                      [&](int64_t begin, int64_t end) {
                        const int64_t r0 = begin * kRowUnit, r1 = std::min(rows_, end * kRowUnit);
                        gemm_nt_fixed_order(x, num_tokens, in_place_type_,
                                            base + static_cast<size_t>(r0) * row_bytes, r1 - r0,
                                            cols_, y + r0, rows_);
                      },
                      (min_rows + kRowUnit - 1) / kRowUnit);
    return;
  }
  const int64_t tile_rows = tile_rows_for(cols_);
  tile_.resize(static_cast<size_t>(std::min(tile_rows, rows_) * cols_));
  for (int64_t r0 = 0; r0 < rows_; r0 += tile_rows) {
    const int64_t n = std::min(tile_rows, rows_ - r0);
    pool.parallel_for(
        n,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r)
            dequantize_row(weight_.dtype, weight_.row(r0 + r), tile_.data() + r * cols_, cols_);
          gemm_nt_fixed_order(x, num_tokens, tile_.data() + begin * cols_, end - begin, cols_,
                              y + r0 + begin, rows_);
        },
        min_rows);
  }
}

std::vector<float> widen_vector(const WeightTensor& tensor) {
  std::vector<float> out(static_cast<size_t>(tensor.num_elements()));
  dequantize_row(tensor.dtype, tensor.data, out.data(), tensor.num_elements());
  return out;
}

}  // namespace sluice
