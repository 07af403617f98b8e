#include "engine/backend/cpu/cpu_linear.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include <sys/mman.h>
#include <unistd.h>

#include "engine/backend/cpu/cpu_gemm.h"
#include "engine/backend/cpu/cpu_quant_gemm.h"
#include "engine/backend/cpu/cpu_quant_interleave.h"
#include "engine/core/error.h"

namespace sluice {

namespace {

bool is_aligned_for_type(const WeightTensor& w) {
  const size_t alignment = w.dtype == DType::F32 ? alignof(float) : alignof(uint16_t);
  return reinterpret_cast<uintptr_t>(w.data) % alignment == 0;
}

// Threads take rows in multiples of this, so that only the last tile of the matrix is partial.
constexpr int64_t kRowUnit = 16;

// Hands the whole pages of [data, data + size) back to the kernel: a file map's pages are read
// from the file again if touched; anonymous memory (a model built in memory) is only reclaimed
// where it can be swapped.
void release_pages(const uint8_t* data, size_t size) {
#if defined(MADV_PAGEOUT)
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + page - 1) / page * page;
  const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size) / page * page;
  if (begin < end) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_PAGEOUT);
#else
  (void)data, (void)size;
#endif
}

}  // namespace

CpuMatrix::CpuMatrix(const WeightTensor& weight, bool interleave, ThreadPool* pool)
    : weight_(weight), rows_(weight.empty() ? 0 : weight.rows()), cols_(weight.cols()) {
  if (weight.empty()) return;
  if (has_quant_kernels(weight.dtype)) {  // quant_gemm reads the blocks
    if (interleave && rows_ >= kInterleaveRows &&
        has_interleaved_kernel(weight.dtype, best_quant_kernel_isa()) &&
        cols_ % interleaved_tile_cols(weight.dtype) == 0) {
      interleaved_.allocate(interleaved_bytes(weight.dtype, rows_, cols_));
      const size_t group_bytes = static_cast<size_t>(kInterleaveRows) * weight.row_bytes();
      const auto interleave_groups = [&](int64_t begin, int64_t end) {
        interleave_rows(weight.dtype, weight.data + static_cast<size_t>(begin) * group_bytes,
                        weight.row_bytes(), (end - begin) * kInterleaveRows, cols_,
                        interleaved_.data() + static_cast<size_t>(begin) * group_bytes);
      };
      const int64_t num_groups = rows_ / kInterleaveRows;
      if (pool) {
        pool->parallel_for(num_groups, interleave_groups);
      } else {
        interleave_groups(0, num_groups);
      }
      // Every product reads the tiles from now on: the file's pages of those rows go back.
      replaced_map_bytes_ = interleaved_.size();
      release_pages(weight.data, replaced_map_bytes_);
    }
    return;
  }
  if (!gemm_multiplies_in_place(weight.dtype)) {
    fail("weight ", weight.name, ": the CPU backend has no product for ", dtype_name(weight.dtype),
         " weights");
  }
  in_place_ = weight.data;
  if (!is_aligned_for_type(weight)) {
    // Rare (a file's tensor data at an odd offset): the kernels load whole elements.
    aligned_copy_.resize((weight.num_bytes + sizeof(float) - 1) / sizeof(float));
    std::memcpy(aligned_copy_.data(), weight.data, weight.num_bytes);
    in_place_ = aligned_copy_.data();
  }
}

void CpuMatrix::row(int64_t r, float* out) const {
  dequantize_row(weight_.dtype, weight_.row(r), out, cols_);
}

bool CpuMatrix::is_quantized() const {
  return !empty() && has_quant_kernels(weight_.dtype);
}

QuantMatrixView CpuMatrix::quant_view() const {
  return QuantMatrixView{
      weight_.dtype, weight_.data,        rows_,
      cols_,         weight_.row_bytes(), interleaved_.size() > 0 ? interleaved_.data() : nullptr};
}

void CpuMatrix::multiply(const float* x, int64_t num_tokens, float* y, ThreadPool& pool) const {
  assert(rows_ > 0);  // multiply on an empty matrix is a caller bug
  if (num_tokens <= 0) return;
  if (has_quant_kernels(weight_.dtype)) {
    quant_gemm(quant_view(), x, num_tokens, y, rows_, pool);
    return;
  }
  // Threads split the output features. gemm_nt_fixed_order sums every element in one order
  // whatever the rows or tokens beside it, so neither the split nor the batch changes a bit.
  // Chunks below ~64k multiply-adds are not worth a thread.
  const int64_t min_rows =
      std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(1, num_tokens * cols_));
  const auto* base = static_cast<const uint8_t*>(in_place_);
  const size_t row_bytes = dtype_num_bytes(weight_.dtype, cols_);
  pool.parallel_for((rows_ + kRowUnit - 1) / kRowUnit,
                    [&](int64_t begin, int64_t end) {
                      const int64_t r0 = begin * kRowUnit, r1 = std::min(rows_, end * kRowUnit);
                      gemm_nt_fixed_order(x, num_tokens, weight_.dtype,
                                          base + static_cast<size_t>(r0) * row_bytes, r1 - r0,
                                          cols_, y + r0, rows_);
                    },
                    (min_rows + kRowUnit - 1) / kRowUnit);
}

void multiply_all(std::span<const MatrixProduct> products, ThreadPool& pool) {
  thread_local std::vector<QuantProduct> quantized;
  thread_local std::vector<int> group_index;  // of each product in `quantized`, or -1
  quantized.clear();
  group_index.assign(products.size(), -1);
  for (size_t i = 0; i < products.size(); ++i) {
    const MatrixProduct& p = products[i];
    if (p.num_tokens <= 0) continue;
    if (!p.matrix->is_quantized()) {
      p.matrix->multiply(p.x, p.num_tokens, p.y, pool);
      continue;
    }
    QuantProduct q{p.matrix->quant_view(), p.x, p.num_tokens, p.y, p.matrix->rows()};
    if (p.same_input_as >= 0) {
      int source = group_index[static_cast<size_t>(p.same_input_as)];
      if (source >= 0 && quantized[static_cast<size_t>(source)].shares_activations_with >= 0)
        source = quantized[static_cast<size_t>(source)].shares_activations_with;
      if (source >= 0 && quantized[static_cast<size_t>(source)].w.dtype == q.w.dtype &&
          quantized[static_cast<size_t>(source)].w.cols == q.w.cols) {
        q.shares_activations_with = source;
      }
    }
    group_index[i] = static_cast<int>(quantized.size());
    quantized.push_back(q);
  }
  if (!quantized.empty()) quant_gemm_group(quantized, pool);
}

std::vector<float> widen_vector(const WeightTensor& tensor) {
  std::vector<float> out(static_cast<size_t>(tensor.num_elements()));
  dequantize_row(tensor.dtype, tensor.data, out.data(), tensor.num_elements());
  return out;
}

}  // namespace sluice
