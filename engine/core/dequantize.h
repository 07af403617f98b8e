// Widening of every stored element type to fp32, one function per type: the `dequantize_row`
// column of the dtype traits table (engine/core/dtype.cpp). Callers go through
// dequantize_row(DType, ...) in dtype.h; the per-type functions are declared here for the table.
//
// The quantized types reproduce ggml's to_float bit for bit (the llama-q fixtures in
// ../shared/models/tiny-arch check every type): each value is computed with the same float
// operations in the same order, one rounding per operation, so dequantize.cpp is compiled with
// -ffp-contract=off (engine/CMakeLists.txt): an FMA would round once where ggml rounds twice.
//
// Each function: num_elements values at src (starting at a block, at any byte alignment) to dst.
// Precondition: num_elements is a multiple of the type's block (the loaders check every row).
#pragma once

#include <cstdint>

namespace sluice {

void dequantize_row_f32(const void* src, float* dst, int64_t num_elements);
void dequantize_row_f16(const void* src, float* dst, int64_t num_elements);
void dequantize_row_bf16(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q8_0(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q4_0(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q4_1(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q5_0(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q5_1(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q2_k(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q3_k(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q4_k(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q5_k(const void* src, float* dst, int64_t num_elements);
void dequantize_row_q6_k(const void* src, float* dst, int64_t num_elements);
void dequantize_row_mxfp4(const void* src, float* dst, int64_t num_elements);

}  // namespace sluice
