// Quantized GGUF files: every llama-q file of ../shared/models/tiny-arch (each GGUF quantization
// type, and the mixed Q4_K_M) loads with each tensor's own type; tensors of a type Sluice has no
// kernels for, and rows that are not whole blocks, are refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "engine/core/error.h"
#include "engine/model/model.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

const std::string kLlamaQ = "models/tiny-arch/llama-q/";

std::string llama_q_file(const std::string& type) {
  return test::shared_path(kLlamaQ + "gguf/llama-q-" + type + ".gguf");
}

// ---- loading ------------------------------------------------------------------------------

// Q4_K_M, as llama-quantize mixes it (the fixture README lists each tensor's type).
TEST(QuantizedGguf, MixedFileLoadsEachTensorWithItsOwnType) {
  const auto model = load_model(llama_q_file("Q4_K_M"));
  const ModelWeights& w = model->weights;
  EXPECT_EQ(w.token_embedding.dtype, DType::Q4_K);
  EXPECT_EQ(w.lm_head.dtype, DType::Q6_K);
  EXPECT_EQ(w.layers[0].wv.dtype, DType::Q4_K);
  EXPECT_EQ(w.layers[0].w_down.dtype, DType::Q4_K);
  EXPECT_EQ(w.layers[1].wv.dtype, DType::Q6_K);
  EXPECT_EQ(w.layers[1].w_down.dtype, DType::Q6_K);
  EXPECT_EQ(w.layers[1].w_up.dtype, DType::Q4_K);
  EXPECT_EQ(w.final_norm.dtype, DType::F32);
  EXPECT_EQ(model->weight_dtypes(), "F32+Q4_K+Q6_K");
}

// Every --pure file: all matrices in the one type, norms F32.
TEST(QuantizedGguf, EveryPureFileLoadsItsMatricesInItsType) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    SCOPED_TRACE(traits.name);
    const auto model = load_model(llama_q_file(traits.name));
    EXPECT_EQ(model->weight_dtypes(), std::string("F32+") + traits.name);
    EXPECT_EQ(model->weights.layers[1].w_gate.dtype, traits.dtype);
    EXPECT_EQ(model->weights.layers[1].w_gate.num_bytes, dtype_num_bytes(traits.dtype, 512 * 256));
  }
}

// The header bytes of a tensor's info in a GGUF file: its name (length-prefixed) is followed by
// the number of dimensions, the dimensions (ne, innermost first) and the ggml type id.
struct TensorInfoOffsets {
  size_t dims = 0;  // uint64 ne[0], ne[1], ...
  size_t type = 0;  // uint32
};

TensorInfoOffsets find_tensor_info(const std::string& bytes, const std::string& name) {
  std::string key(8, '\0');
  const uint64_t length = name.size();
  std::memcpy(key.data(), &length, 8);
  key += name;
  const size_t at = bytes.find(key);
  if (at == std::string::npos) throw std::runtime_error("no tensor info for " + name);
  uint32_t num_dims = 0;
  std::memcpy(&num_dims, bytes.data() + at + key.size(), 4);
  const size_t dims = at + key.size() + 4;
  return {dims, dims + 8 * num_dims};
}

// A copy of llama-q-<type>.gguf under a temp dir with `patch` applied to its bytes.
template <typename Patch>
std::string patched_copy(const std::string& type, const std::string& name, Patch&& patch) {
  std::string bytes = test::read_file(llama_q_file(type));
  patch(bytes);
  const std::string path = test::make_temp_dir("quantized-gguf") + "/" + name;
  test::write_file(path, bytes);
  return path;
}

std::string load_error(const std::string& path) {
  try {
    load_model(path);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an error loading " << path;
  return "";
}

TEST(QuantizedGguf, TensorOfAnUnsupportedTypeIsRefusedByName) {
  // blk.0.ffn_down.weight (Q4_K, 144 bytes per 256 weights) relabelled IQ2_XXS (ggml type 16,
  // 66 bytes per 256): the data still lies inside the file, so only the type is at fault.
  const std::string path = patched_copy("Q4_K", "model.gguf", [](std::string& bytes) {
    const uint32_t iq2_xxs = 16;
    std::memcpy(bytes.data() + find_tensor_info(bytes, "blk.0.ffn_down.weight").type, &iq2_xxs, 4);
  });
  const std::string message = load_error(path);
  EXPECT_THAT(message, HasSubstr("model.gguf: tensor blk.0.ffn_down.weight: type IQ2_XXS is not "
                                 "supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, "
                                 "Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K)"));
}

TEST(QuantizedGguf, RowsThatAreNotWholeBlocksAreRefusedByName) {
  // blk.0.attn_k.weight [128, 256] in Q4_K (blocks of 256) declared as [256, 128]: rows of 128.
  const std::string path = patched_copy("Q4_K", "rows.gguf", [](std::string& bytes) {
    const uint64_t ne[2] = {128, 256};
    std::memcpy(bytes.data() + find_tensor_info(bytes, "blk.0.attn_k.weight").dims, ne, 16);
  });
  const std::string message = load_error(path);
  EXPECT_THAT(message, HasSubstr("rows.gguf: tensor blk.0.attn_k.weight: row length 128 is not a "
                                 "multiple of the Q4_K block size 256"));
}

}  // namespace
}  // namespace sluice
