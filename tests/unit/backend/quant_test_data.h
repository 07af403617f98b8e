// Test data for the quantized kernels: the llama-q fixture tensors (../shared/models/tiny-arch,
// quantized by llama.cpp, with gguf-py's bit-exact dequantization beside them), random rows of
// any quantized type, and random activations.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"
#include "engine/model/gguf_reader.h"
#include "tests/support/test_paths.h"

namespace sluice::test {

// The quantized types with kernels that the llama-q fixture files hold, as they name them.
inline const std::vector<DType>& kernel_dtypes() {
  static const std::vector<DType> types = {DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1,
                                           DType::Q8_0, DType::Q2_K, DType::Q3_K, DType::Q4_K,
                                           DType::Q5_K, DType::Q6_K};
  return types;
}

// Every quantized type with kernels: kernel_dtypes() and MXFP4, which llama-q lacks (its real
// tensors are gpt-oss's experts), for the tests on random rows.
inline const std::vector<DType>& all_kernel_dtypes() {
  static const std::vector<DType> types = [] {
    std::vector<DType> out = kernel_dtypes();
    out.push_back(DType::MXFP4);
    return out;
  }();
  return types;
}

// A tensor of a llama-q fixture file with its reference dequantization.
struct FixtureTensor {
  std::unique_ptr<GgufFile> file;  // keeps the map alive
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const uint8_t* data = nullptr;
  size_t row_bytes = 0;
  std::vector<float> dequantized;  // [rows, cols], gguf-py's dequantization
};

// Reads `tensor` of llama-q-<file_type>.gguf and its dequantization from expected/dequant/
// <dequant_dir>/. The GGUF reader's table may not map every type to a DType yet, so the type is
// looked up in Sluice's dtype table by its GGUF id.
inline FixtureTensor load_llama_q_tensor(const std::string& file_type, const std::string& tensor,
                                         const std::string& dequant_dir) {
  const std::string dir = "models/tiny-arch/llama-q/";
  FixtureTensor out;
  out.file = GgufFile::open(shared_path(dir + "gguf/llama-q-" + file_type + ".gguf"));
  const GgufTensorInfo* info = out.file->find_tensor(tensor);
  if (!info) fail("llama-q-", file_type, ".gguf has no tensor ", tensor);
  bool found = false;
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (traits.ggml_type == info->ggml_type) {
      out.dtype = traits.dtype;
      found = true;
    }
  }
  if (!found) fail(tensor, ": ggml type ", info->ggml_type, " is not in Sluice's dtype table");
  if (info->shape.size() != 2) fail(tensor, " is not a matrix");
  out.rows = info->shape[0];
  out.cols = info->shape[1];
  out.data = info->data;
  out.row_bytes = dtype_num_bytes(out.dtype, out.cols);
  const std::string bytes =
      read_file(shared_path(dir + "expected/dequant/" + dequant_dir + "/" + tensor + ".bin"));
  if (bytes.size() != static_cast<size_t>(out.rows * out.cols) * sizeof(float))
    fail(tensor, ".bin has ", bytes.size(), " bytes for ", out.rows, "x", out.cols, " floats");
  out.dequantized.resize(static_cast<size_t>(out.rows * out.cols));
  std::memcpy(out.dequantized.data(), bytes.data(), bytes.size());
  return out;
}

inline FixtureTensor load_attn_k(DType dtype) {
  const std::string name(dtype_name(dtype));
  return load_llama_q_tensor(name, "blk.0.attn_k.weight", name);
}

// Writes an fp16 scale drawn from [low, high) at byte offset `at` of a block.
inline void put_half(uint8_t* block, size_t at, std::mt19937& rng, float low, float high) {
  const uint16_t h = f32_to_f16(std::uniform_real_distribution<float>(low, high)(rng));
  std::memcpy(block + at, &h, sizeof h);
}

// Random rows of a quantized type: random quant bits (every pattern is valid) with scales of a
// realistic size (a random fp16 could be inf or NaN).
inline std::vector<uint8_t> random_quant_rows(DType dtype, int64_t rows, int64_t cols,
                                              uint32_t seed) {
  using namespace quant;
  std::mt19937 rng(seed);
  const DTypeTraits& traits = dtype_traits(dtype);
  std::vector<uint8_t> bytes(dtype_num_bytes(dtype, rows * cols));
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (size_t at = 0; at < bytes.size(); at += traits.block_bytes) {
    uint8_t* block = bytes.data() + at;
    switch (dtype) {
      case DType::Q4_0:
      case DType::Q5_0:
      case DType::Q8_0:
        put_half(block, 0, rng, -0.01f, 0.01f);
        break;
      case DType::Q4_1:
      case DType::Q5_1:
        put_half(block, offsetof(BlockQ4_1, d), rng, 0.0f, 0.01f);
        put_half(block, offsetof(BlockQ4_1, m), rng, -0.1f, 0.0f);
        break;
      case DType::Q2_K:
        put_half(block, offsetof(BlockQ2_K, d), rng, 0.0f, 0.01f);
        put_half(block, offsetof(BlockQ2_K, dmin), rng, 0.0f, 0.01f);
        break;
      case DType::Q3_K:
        put_half(block, offsetof(BlockQ3_K, d), rng, -0.001f, 0.001f);
        break;
      case DType::Q4_K:
      case DType::Q5_K:
        put_half(block, offsetof(BlockQ4_K, d), rng, 0.0f, 0.001f);
        put_half(block, offsetof(BlockQ4_K, dmin), rng, 0.0f, 0.001f);
        break;
      case DType::Q6_K:
        put_half(block, offsetof(BlockQ6_K, d), rng, -0.0005f, 0.0005f);
        break;
      case DType::MXFP4:  // 2^-16 .. 2^-8 (values up to 12 times that)
        block[offsetof(BlockMXFP4, e)] = static_cast<uint8_t>(112 + rng() % 9);
        break;
      default:
        fail("random_quant_rows: ", dtype_name(dtype), " is not quantized");
    }
  }
  return bytes;
}

// Normal activations with a few large outliers per row, as hidden states have.
inline std::vector<float> random_activations(int64_t num_tokens, int64_t cols, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<size_t>(num_tokens * cols));
  for (float& v : x) v = normal(rng);
  for (int64_t t = 0; t < num_tokens; ++t) x[static_cast<size_t>(t * cols + (t * 37) % cols)] *= 20;
  return x;
}

}  // namespace sluice::test
