// Dequantization of every GGUF quantized type against ggml's own: the llama-q fixtures hold one
// tensor of each type (read here with Sluice's GGUF reader) and its values as llama.cpp's gguf-py
// dequantizes them (../shared/models/tiny-arch/llama-q/expected/dequant/, bit-identical to
// ggml's to_float). Every value must match bit for bit. MXFP4, which llama-q lacks: hand-made
// blocks and gpt-oss's experts against its F32 file.
#include "engine/core/dequantize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/dtype.h"
#include "engine/core/quant_blocks.h"
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
    // llama-q has no MXFP4 tensor; gpt-oss's experts check it (DequantizeMxfp4 below).
    if (!traits.quantized || traits.dtype == DType::MXFP4) continue;
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

// MXFP4's scale 2^(e - 128) as ggml's GGML_E8M0_TO_FP32_HALF has it, at every edge: the two
// subnormals for e = 0 and 1, the smallest normal, 1, and the largest (e = 255 is no NaN).
TEST(DequantizeMxfp4, ScaleIsGgmlsHalvedE8M0) {
  const std::pair<uint8_t, uint32_t> cases[] = {
      {0, 0x00200000u},   {1, 0x00400000u},   {2, 0x00800000u},  {127, 0x3f000000u},
      {128, 0x3f800000u}, {254, 0x7e800000u}, {255, 0x7f000000u}};
  for (const auto& [e, bits] : cases) {
    const float scale = quant::mxfp4_scale(e);
    uint32_t actual;
    std::memcpy(&actual, &scale, sizeof actual);
    EXPECT_EQ(actual, bits) << "e = " << int{e};
  }
}

// Hand-made blocks: element j is the low nibble of qs[j], element j + 16 its high nibble, each
// nibble the doubled FP4 value (0b1000 is -0 and reads +0) times 2^(e - 128); the products are
// exact or overflow to inf (12 * 2^126 and above), as ggml's float product does.
TEST(DequantizeMxfp4, HandMadeBlocksAtEveryExponentEdge) {
  const int kFp4Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
  for (const int e : {0, 1, 2, 100, 127, 128, 129, 200, 254, 255}) {
    quant::BlockMXFP4 block{};
    block.e = static_cast<uint8_t>(e);
    for (int j = 0; j < 16; ++j) block.qs[j] = static_cast<uint8_t>(j | (15 - j) << 4);
    float out[32];
    dequantize_row(DType::MXFP4, &block, out, 32);
    for (int i = 0; i < 32; ++i) {
      const int nibble = i < 16 ? i : 15 - (i - 16);
      const float expected = std::ldexp(static_cast<float>(kFp4Doubled[nibble]), e - 128);
      EXPECT_EQ(std::memcmp(&out[i], &expected, sizeof expected), 0)
          << "e = " << e << ", element " << i << ": " << out[i] << ", expected " << expected;
    }
  }
}

// gpt-oss's expert tensors (3-D [n_expert, out, in], MXFP4 in the converter's output) widen to
// exactly the F32 file's values of the same tensors (README, "2026 additions": max |diff| 0): bit
// for bit but for the sign of zero, which the F32 file keeps from code 0b1000 (-0) and ggml's
// to_float, which Sluice follows, drops.
TEST(DequantizeMxfp4, GptOssExpertsEqualTheF32FileValues) {
  const std::string dir = "models/tiny-arch/gpt-oss/gguf/";
  const auto mxfp4 = GgufFile::open(test::shared_path(dir + "gpt-oss-MXFP4.gguf"));
  const auto f32 = GgufFile::open(test::shared_path(dir + "gpt-oss-F32.gguf"));
  int num_checked = 0;
  int64_t total_negative_zeros = 0;
  for (const GgufTensorInfo& t : mxfp4->tensors()) {
    if (t.ggml_type != 39) continue;
    SCOPED_TRACE(t.name);
    ASSERT_EQ(t.type_name, "MXFP4");
    ASSERT_EQ(t.dtype, DType::MXFP4);
    ASSERT_EQ(t.shape.size(), 3u);
    const GgufTensorInfo* reference = f32->find_tensor(t.name);
    ASSERT_NE(reference, nullptr);
    ASSERT_EQ(reference->dtype, DType::F32);
    ASSERT_EQ(reference->shape, t.shape);
    const int64_t n = t.shape[0] * t.shape[1] * t.shape[2];
    ASSERT_EQ(t.num_bytes, dtype_num_bytes(DType::MXFP4, n));
    std::vector<float> values(static_cast<size_t>(n));
    dequantize_row(DType::MXFP4, t.data, values.data(), n);
    int64_t num_different = 0, num_negative_zeros = 0;
    for (int64_t i = 0; i < n; ++i) {
      float expected;
      std::memcpy(&expected, reference->data + i * 4, 4);
      if (std::memcmp(&values[i], &expected, 4) == 0) continue;
      // Code 0b1000 (-0): HF's table, which made the F32 file, keeps the sign; ggml's
      // kvalues_mxfp4 reads +0, and so does Sluice.
      if (expected == 0.0f && std::signbit(expected) && values[i] == 0.0f &&
          !std::signbit(values[i])) {
        ++num_negative_zeros;
      } else if (++num_different <= 5) {
        ADD_FAILURE() << "element " << i << ": " << values[i] << ", F32 file " << expected;
      }
    }
    EXPECT_EQ(num_different, 0) << "of " << n;
    total_negative_zeros += num_negative_zeros;
    ++num_checked;
  }
  std::printf(
      "[ measured ] gpt-oss experts: %lld values -0 in the F32 file, +0 here (code 0b1000)\n",
      static_cast<long long>(total_negative_zeros));
  // gate, up and down of both layers.
  EXPECT_EQ(num_checked, 6);
}

TEST(Dequantize, EveryTypeHasItsWidening) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    EXPECT_NE(traits.dequantize_row, nullptr) << traits.name;
  }
}

}  // namespace
}  // namespace sluice
