// Matrix products of the CPU backend: y[T, out] = x[T, in] · W^T in a fixed summation order
// (cpu_gemm.h), for weights of every stored type, none widened to an fp32 copy: F32, F16 and
// BF16 weights are multiplied where they lie (the 16-bit ones widened in registers), quantized
// weights by the quantized GEMM on their blocks (cpu_quant_gemm.h).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "engine/backend/cpu/cpu_quant_gemm.h"
#include "engine/core/huge_page_buffer.h"
#include "engine/core/thread_pool.h"
#include "engine/model/weight_tensor.h"

namespace sluice {

class CpuMatrix {
 public:
  CpuMatrix() = default;
  // Prepares W for products (an empty W gives an empty matrix). A float-type W that its file
  // does not align for its type is copied once to aligned memory. With interleave, quantized
  // rows of a type that this CPU's kernels read interleaved (cpu_quant_interleave.h) are copied
  // into tiles once, and, since every product then reads the tiles, the file's pages of those
  // rows are handed back to the kernel; the threads of pool, where given, share that copying.
  // Throws Error for a type with neither an in-place product nor quantized kernels.
  explicit CpuMatrix(const WeightTensor& weight, bool interleave = false,
                     ThreadPool* pool = nullptr);

  int64_t rows() const { return rows_; }  // out_features
  int64_t cols() const { return cols_; }  // in_features
  // Bytes this matrix holds beyond the file map (an aligned copy, or the interleaved tiles).
  size_t owned_bytes() const { return aligned_copy_.size() * sizeof(float) + interleaved_.size(); }
  // Bytes of the file map the tiles replace: products never read them after load.
  size_t replaced_map_bytes() const { return replaced_map_bytes_; }
  bool empty() const { return rows_ == 0; }

  // y[num_tokens, rows] = x[num_tokens, cols] · W^T. Each output element is computed with the
  // same operation order whatever num_tokens is (tiles depend only on the weight's shape).
  // Precondition: !empty().
  void multiply(const float* x, int64_t num_tokens, float* y, ThreadPool& pool) const;

  // Widens row r into out[cols].
  void row(int64_t r, float* out) const;

  // The weight as quant_gemm reads it. Precondition: is_quantized().
  bool is_quantized() const;
  QuantMatrixView quant_view() const;

 private:
  WeightTensor weight_;
  const void* in_place_ = nullptr;  // float-type rows as the kernels read them: the map or the copy
  std::vector<float> aligned_copy_;  // the bytes of a misaligned float-type weight
  HugePageBuffer interleaved_;       // the tiles of the first rows / 16 * 16 rows, or empty
  size_t replaced_map_bytes_ = 0;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
};

// One product of multiply_all: y[num_tokens, matrix->rows()] = x[num_tokens, cols] . W^T.
struct MatrixProduct {
  const CpuMatrix* matrix = nullptr;
  const float* x = nullptr;
  int64_t num_tokens = 0;
  float* y = nullptr;
  // An earlier product of the same call with the same x and num_tokens (gate and up of one
  // expert): quantized matrices of one type reuse its quantized activations; -1 = none.
  int same_input_as = -1;
};

// Runs every product with the bits CpuMatrix::multiply gives it; the quantized ones together in
// two parallel loops (quant_gemm_group), so that dozens of small products (a mixture-of-experts
// layer's experts) do not each pay for waking the pool.
void multiply_all(std::span<const MatrixProduct> products, ThreadPool& pool);

// Widens a 1-D tensor (norm weights, biases) to fp32.
std::vector<float> widen_vector(const WeightTensor& tensor);

}  // namespace sluice
