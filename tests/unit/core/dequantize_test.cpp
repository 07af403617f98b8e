// Dequantization of every GGUF quantized type against ggml's own: the llama-q fixtures hold one
// tensor of each type (read here with Sluice's GGUF reader) and its values as llama.cpp's gguf-py
// dequantizes them (../shared/models/tiny-arch/llama-q/expected/dequant/, bit-identical to
// ggml's to_float). Every value must match bit for bit.
#include "engine/core/dequantize.h"

#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/model/gguf_reader.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

struct DequantCase {
  std::string name;    // for the test name
  std::string file;    // llama-q-<file>.gguf
  std::string tensor;  // the tensor compared
  DType dtype;         // its type in that file
};

void PrintTo(const DequantCase& c, std::ostream* os) {
  *os << c.name;
}

const std::string kLlamaQ = "models/tiny-arch/llama-q/";

std::vector<DequantCase> dequant_cases() {
  std::vector<DequantCase> cases;
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    cases.push_back({traits.name, traits.name, "blk.0.attn_k.weight", traits.dtype});
  }
  // The mixed file: each tensor has its own type.
  cases.push_back({"Q4_K_M_attn_k", "Q4_K_M", "blk.0.attn_k.weight", DType::Q4_K});
  cases.push_back({"Q4_K_M_attn_v", "Q4_K_M", "blk.1.attn_v.weight", DType::Q6_K});
  return cases;
}

// The tensor's expected values: float32 little-endian, [rows, cols] as in the GGUF.
std::vector<float> expected_values(const DequantCase& c) {
  const std::string bytes = test::read_file(
      test::shared_path(kLlamaQ + "expected/dequant/" + c.file + "/" + c.tensor + ".bin"));
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

class DequantizeLlamaQ : public ::testing::TestWithParam<DequantCase> {};

TEST_P(DequantizeLlamaQ, EveryRowEqualsGgmlBitForBit) {
  const DequantCase& c = GetParam();
  const auto gguf = GgufFile::open(test::shared_path(kLlamaQ + "gguf/llama-q-" + c.file + ".gguf"));
  const GgufTensorInfo* tensor = gguf->find_tensor(c.tensor);
  ASSERT_NE(tensor, nullptr) << c.tensor;
  ASSERT_EQ(tensor->dtype, c.dtype) << c.tensor;
  ASSERT_EQ(tensor->shape, (std::vector<int64_t>{128, 256}));
  const std::vector<float> expected = expected_values(c);
  ASSERT_EQ(expected.size(), 128u * 256u);

  // Row by row, as the backends widen them.
  const int64_t rows = tensor->shape[0], cols = tensor->shape[1];
  const size_t row_bytes = dtype_num_bytes(c.dtype, cols);
  std::vector<float> actual(expected.size());
  for (int64_t r = 0; r < rows; ++r) {
    dequantize_row(c.dtype, tensor->data + static_cast<size_t>(r) * row_bytes,
                   actual.data() + r * cols, cols);
  }
  int num_different = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(&actual[i], &expected[i], sizeof(float)) != 0 && ++num_different <= 5) {
      ADD_FAILURE() << c.tensor << " [" << i / 256 << ", " << i % 256 << "]: " << actual[i]
                    << ", ggml " << expected[i];
    }
  }
  EXPECT_EQ(num_different, 0) << "of " << expected.size() << " values";

  // The whole tensor in one call, from an odd address (a row of a memory map has no alignment).
  std::vector<uint8_t> shifted(tensor->num_bytes + 1);
  std::memcpy(shifted.data() + 1, tensor->data, tensor->num_bytes);
  std::vector<float> whole(expected.size());
  dequantize_row(c.dtype, shifted.data() + 1, whole.data(), rows * cols);
  EXPECT_EQ(std::memcmp(whole.data(), expected.data(), expected.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Ggml, DequantizeLlamaQ, ::testing::ValuesIn(dequant_cases()),
                         [](const auto& param_info) { return param_info.param.name; });

TEST(Dequantize, EveryTypeHasItsWidening) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    EXPECT_NE(traits.dequantize_row, nullptr) << traits.name;
  }
}

}  // namespace
}  // namespace sluice
