// Dequantization of GGUF blocks to T. One kernel body for every format (kernels/quant_formats.cuh
// decodes them): a grid-stride loop in which each thread widens a group of 8 consecutive values
// (one vector store when the output is aligned for it). The same groups serve dequantize_rows,
// the embedding lookup of a table kept in its blocks.
#include "kernels/dequantize.cuh"

#include "kernels/dtype_traits.cuh"
#include "kernels/quant_formats.cuh"

namespace sluice::kernels {
namespace {

using detail::from_float;
using detail::global_thread_idx;
using detail::grid_stride;
using detail::Vec;
using quant::kGroup;

constexpr int kThreads = 256;

// blocks: n_elements / Format::kBlockElements blocks of Format::kBlockBytes
// out:    [n_elements]
template <typename Format, typename T>
__global__ void dequantize_kernel(const uint8_t* __restrict__ blocks, T* __restrict__ out,
                                  int64_t n_elements, bool is_packed) {
  static_assert(Format::kBlockElements % kGroup == 0);
  using OutVec = Vec<T, kGroup>;
  const int64_t num_groups = n_elements / kGroup;
  for (int64_t g = global_thread_idx(); g < num_groups; g += grid_stride()) {
    const int64_t first = g * kGroup;
    float values[kGroup];
    Format::decode(blocks + first / Format::kBlockElements * Format::kBlockBytes,
                   static_cast<int>(first % Format::kBlockElements), values);
    OutVec out_vec;
#pragma unroll
    for (int j = 0; j < kGroup; ++j) out_vec.values[j] = from_float<T>(values[j]);
    if (is_packed) {
      reinterpret_cast<OutVec*>(out)[g] = out_vec;
    } else {
#pragma unroll
      for (int j = 0; j < kGroup; ++j) out[first + j] = out_vec.values[j];
    }
  }
}

// table:     [vocab_size] rows of row_bytes bytes, each cols values in Format blocks
// token_ids: [num_tokens]
// out:       [num_tokens, cols]
// One value: the table's value rounded to T (as a widened table would hold it), times scale in
// float, rounded to T again (scale 1: the rounded value itself).
template <typename Format, typename T>
__global__ void dequantize_rows_kernel(const uint8_t* __restrict__ table, size_t row_bytes,
                                       const int32_t* __restrict__ token_ids, T* __restrict__ out,
                                       int num_tokens, int cols, int vocab_size, float scale) {
  const int groups_per_row = cols / kGroup;
  const int64_t num_groups = static_cast<int64_t>(num_tokens) * groups_per_row;
  for (int64_t g = global_thread_idx(); g < num_groups; g += grid_stride()) {
    const auto token = static_cast<int>(g / groups_per_row);
    const int first = static_cast<int>(g % groups_per_row) * kGroup;
    T* dst = out + static_cast<int64_t>(token) * cols + first;
    const int32_t id = token_ids[token];
    float values[kGroup] = {};
    if (id >= 0 && id < vocab_size) {
      Format::decode(table + static_cast<size_t>(id) * row_bytes +
                         static_cast<size_t>(first / Format::kBlockElements) * Format::kBlockBytes,
                     first % Format::kBlockElements, values);
    }
#pragma unroll
    for (int j = 0; j < kGroup; ++j) {
      const T rounded = from_float<T>(values[j]);
      dst[j] = scale == 1.0f ? rounded : from_float<T>(detail::to_float(rounded) * scale);
    }
  }
}

}  // namespace

template <typename T>
KernelStatus dequantize(QuantFormat format, const uint8_t* blocks, T* out, int64_t n_elements,
                        cudaStream_t stream) {
  if (n_elements < 0) return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  quant::visit_quant_format(format, [&]<typename Format>(Format) {
    if (n_elements % Format::kBlockElements != 0) return;
    status = kKernelOk;
    if (n_elements == 0) return;
    const bool is_packed = detail::is_aligned(out, alignof(Vec<T, kGroup>));
    detail::launch_kernel(dequantize_kernel<Format, T>,
                          detail::grid_stride_blocks(n_elements / kGroup, kThreads), kThreads, 0,
                          stream, blocks, out, n_elements, is_packed);
    status = detail::launch_status();
  });
  return status;
}

template <typename T>
KernelStatus dequantize_rows(QuantFormat format, const uint8_t* table, size_t row_bytes,
                             const int32_t* token_ids, T* out, int num_tokens, int cols,
                             int vocab_size, float scale, cudaStream_t stream) {
  if (num_tokens < 0 || cols < 0 || vocab_size < 0) return detail::invalid_argument();
  KernelStatus status = detail::invalid_argument();
  quant::visit_quant_format(format, [&]<typename Format>(Format) {
    if (cols % Format::kBlockElements != 0 ||
        row_bytes != static_cast<size_t>(cols / Format::kBlockElements) * Format::kBlockBytes)
      return;
    status = kKernelOk;
    if (num_tokens == 0 || cols == 0) return;
    const int64_t groups = static_cast<int64_t>(num_tokens) * (cols / kGroup);
    detail::launch_kernel(dequantize_rows_kernel<Format, T>,
                          detail::grid_stride_blocks(groups, kThreads), kThreads, 0, stream, table,
                          row_bytes, token_ids, out, num_tokens, cols, vocab_size, scale);
    status = detail::launch_status();
  });
  return status;
}

#define SLUICE_INSTANTIATE_DEQUANTIZE(T)                                                        \
  template KernelStatus dequantize<T>(QuantFormat, const uint8_t*, T*, int64_t, cudaStream_t);  \
  template KernelStatus dequantize_rows<T>(QuantFormat, const uint8_t*, size_t, const int32_t*, \
                                           T*, int, int, int, float, cudaStream_t);
SLUICE_INSTANTIATE_DEQUANTIZE(float)
SLUICE_INSTANTIATE_DEQUANTIZE(__nv_bfloat16)
SLUICE_INSTANTIATE_DEQUANTIZE(__half)
#undef SLUICE_INSTANTIATE_DEQUANTIZE

}  // namespace sluice::kernels
