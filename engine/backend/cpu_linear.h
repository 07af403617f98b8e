// Matrix products of the CPU backend: y[T, out] = x[T, in] · W^T in a fixed summation order
// (cpu_gemm.h), for weights of any stored type. F32, F16 and BF16 weights are multiplied where
// they lie (the 16-bit ones widened in registers); quantized weights with kernels
// (has_quant_kernels) are never widened either: multiply runs the quantized GEMM on their blocks
// in place (cpu_quant_gemm.h). Other types are widened to fp32 once (when the memory budget
// allows) or tile by tile per call.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/core/thread_pool.h"
#include "engine/model/weight_tensor.h"

namespace sluice {

class CpuMatrix {
 public:
  CpuMatrix() = default;
  // Prepares W for products. widen_now: convert quantized weights to fp32 up front (F32, F16
  // and BF16 weights are always used in place).
  CpuMatrix(const WeightTensor& weight, bool widen_now, ThreadPool& pool);

  int64_t rows() const { return rows_; }  // out_features
  int64_t cols() const { return cols_; }  // in_features
  // Bytes this matrix holds beyond the file map (widened copies).
  size_t owned_bytes() const { return widened_.size() * sizeof(float); }
  bool empty() const { return rows_ == 0; }

  // y[num_tokens, rows] = x[num_tokens, cols] · W^T. Each output element is computed with the
  // same operation order whatever num_tokens is (tiles depend only on the weight's shape).
  void multiply(const float* x, int64_t num_tokens, float* y, ThreadPool& pool) const;

  // Widens row r into out[cols].
  void row(int64_t r, float* out) const;

 private:
  WeightTensor weight_;
  const void* in_place_ = nullptr;  // rows the kernels multiply as they are (the map or widened_)
  DType in_place_type_ = DType::F32;
  std::vector<float> widened_;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  mutable std::vector<float> tile_;  // scratch for tile-by-tile widening
};

// Widens a 1-D tensor (norm weights, biases) to fp32.
std::vector<float> widen_vector(const WeightTensor& tensor);

}  // namespace sluice
