// Quantized GGUF files: every llama-q file of ../shared/models/tiny-arch (each GGUF quantization
// type, and the mixed Q4_K_M) loads with each tensor's own type and runs on the CPU backend,
// teacher-forced, within a stated tolerance of llama.cpp's logits on the same file; tensors of a
// type Sluice has no kernels for, and rows that are not whole blocks, are refused by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <ostream>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/model/model.h"
#include "tests/support/float_compare.h"
#include "tests/support/single_request_batch.h"
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
  EXPECT_EQ(w.layers[0][WeightRole::Wv].dtype, DType::Q4_K);
  EXPECT_EQ(w.layers[0][WeightRole::Down].dtype, DType::Q4_K);
  EXPECT_EQ(w.layers[1][WeightRole::Wv].dtype, DType::Q6_K);
  EXPECT_EQ(w.layers[1][WeightRole::Down].dtype, DType::Q6_K);
  EXPECT_EQ(w.layers[1][WeightRole::Up].dtype, DType::Q4_K);
  EXPECT_EQ(w.final_norm.dtype, DType::F32);
  EXPECT_EQ(model->weight_dtypes(), "F32+Q4_K+Q6_K");
}

// Every --pure file: all matrices in the one type, norms F32.
TEST(QuantizedGguf, EveryPureFileLoadsItsMatricesInItsType) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    // llama-q has no MXFP4 file: llama.cpp writes MXFP4 for gpt-oss's experts only.
    if (!traits.quantized || traits.dtype == DType::MXFP4) continue;
    SCOPED_TRACE(traits.name);
    const auto model = load_model(llama_q_file(traits.name));
    EXPECT_EQ(model->weight_dtypes(), std::string("F32+") + traits.name);
    EXPECT_EQ(model->weights.layers[1][WeightRole::Gate].dtype, traits.dtype);
    EXPECT_EQ(model->weights.layers[1][WeightRole::Gate].num_bytes,
              dtype_num_bytes(traits.dtype, 512 * 256));
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

std::string quantized_load_error(const std::string& path) {
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
  const std::string message = quantized_load_error(path);
  EXPECT_THAT(message, HasSubstr("model.gguf: tensor blk.0.ffn_down.weight: type IQ2_XXS is not "
                                 "supported (supported: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, "
                                 "Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, MXFP4)"));
}

TEST(QuantizedGguf, RowsThatAreNotWholeBlocksAreRefusedByName) {
  // blk.0.attn_k.weight [128, 256] in Q4_K (blocks of 256) declared as [256, 128]: rows of 128.
  const std::string path = patched_copy("Q4_K", "rows.gguf", [](std::string& bytes) {
    const uint64_t ne[2] = {128, 256};
    std::memcpy(bytes.data() + find_tensor_info(bytes, "blk.0.attn_k.weight").dims, ne, 16);
  });
  const std::string message = quantized_load_error(path);
  EXPECT_THAT(message, HasSubstr("rows.gguf: tensor blk.0.attn_k.weight: row length 128 is not a "
                                 "multiple of the Q4_K block size 256"));
}

// ---- teacher-forced logits against llama.cpp -----------------------------------------------

// Each file against its own llama.cpp reference (expected/<TYPE>/: the prompt and llama.cpp's
// 48 greedy tokens, logits after every token from one batch).
//
// The CPU backend quantizes activations to 8 bits exactly as ggml does (Q8_0 / Q8_1 blocks of 32
// for the legacy types, Q8_K blocks of 256 for the K-quants) and sums each block in integers, so
// it computes llama.cpp's numbers except where a ~1e-6 difference elsewhere (attention, norms)
// flips the rounding of one 8-bit activation; the flip then propagates through the KV cache to
// later positions. llama.cpp's own batch-vs-incremental spread on these files, the same effect,
// reaches 0.39 (README, check.json). Tolerance: max 0.6, mean 0.1 for every type. Keeping the
// activations in fp32 instead moved logits by up to 1.17 (Q2_K) and 0.14 on average, so a
// regression to float activations fails; a wrong block layout or scale moves logits by at least
// the low-bit types' spread against F32 (max 5 to 26, mean 0.7 to 4).
struct QuantizedCase {
  std::string type;
  float max_tolerance;   // max |sluice - llama.cpp| over every logit
  float mean_tolerance;  // mean |sluice - llama.cpp|
};

void PrintTo(const QuantizedCase& c, std::ostream* os) {
  *os << c.type;
}

constexpr float kLegacyMax = 0.6f, kLegacyMean = 0.1f;  // Q8_0 / Q8_1 activations
constexpr float kKQuantMax = 0.6f, kKQuantMean = 0.1f;  // Q8_K activations

std::vector<QuantizedCase> quantized_cases() {
  return {
      {"Q8_0", kLegacyMax, kLegacyMean},    // measured max, mean: 0.377, 0.051
      {"Q4_0", kLegacyMax, kLegacyMean},    // measured max, mean: 0.425, 0.058
      {"Q4_1", kLegacyMax, kLegacyMean},    // measured max, mean: 0.196, 0.028
      {"Q5_0", kLegacyMax, kLegacyMean},    // measured max, mean: 0.458, 0.066
      {"Q5_1", kLegacyMax, kLegacyMean},    // measured max, mean: 0.214, 0.010
      {"Q2_K", kKQuantMax, kKQuantMean},    // measured max, mean: 0.369, 0.024
      {"Q3_K", kKQuantMax, kKQuantMean},    // measured max, mean: 0.552, 0.076
      {"Q4_K", kKQuantMax, kKQuantMean},    // measured max, mean: 0.186, 0.001
      {"Q5_K", kKQuantMax, kKQuantMean},    // measured max, mean: 0.247, 0.012
      {"Q6_K", kKQuantMax, kKQuantMean},    // measured max, mean: 0, 0
      {"Q4_K_M", kKQuantMax, kKQuantMean},  // measured max, mean: 0.255, 0.002
  };
}

struct Reference {
  std::vector<int32_t> tokens;  // prompt + greedy
  int num_prompt = 0;
  std::vector<int32_t> greedy_ids;
  std::vector<float> greedy_margins;  // top1 - top2 at each greedy step (llama.cpp)
  std::vector<float> logits;          // [tokens.size(), vocab]
};

Reference load_reference(const std::string& type) {
  const std::string dir = kLlamaQ + "expected/" + type + "/";
  const auto logits_json =
      nlohmann::json::parse(test::read_file(test::shared_path(dir + "logits.json")));
  const auto check = nlohmann::json::parse(test::read_file(test::shared_path(dir + "check.json")));
  Reference ref;
  ref.tokens = logits_json.at("tokens").get<std::vector<int32_t>>();
  ref.num_prompt = logits_json.at("n_prompt").get<int>();
  ref.greedy_ids =
      nlohmann::json::parse(test::read_file(test::shared_path(dir + "greedy_ids.json")))
          .get<std::vector<int32_t>>();
  ref.greedy_margins = check.at("greedy_margins").get<std::vector<float>>();
  const std::string bytes = test::read_file(test::shared_path(dir + "logits.bin"));
  ref.logits.resize(bytes.size() / sizeof(float));
  std::memcpy(ref.logits.data(), bytes.data(), ref.logits.size() * sizeof(float));
  return ref;
}

class QuantizedLlamaQ : public ::testing::TestWithParam<QuantizedCase> {};

TEST_P(QuantizedLlamaQ, TeacherForcedLogitsFollowLlamaCpp) {
  const QuantizedCase& c = GetParam();
  const auto model = load_model(llama_q_file(c.type));
  const int vocab = model->config.vocab_size;
  const Reference ref = load_reference(c.type);
  ASSERT_EQ(ref.logits.size(), ref.tokens.size() * static_cast<size_t>(vocab));

  constexpr int kBlockSize = 16;
  const int num_blocks = static_cast<int>(ref.tokens.size() + kBlockSize - 1) / kBlockSize;
  CpuBackend backend(*model, CpuBackendOptions{.num_threads = 2});
  backend.allocate_kv_cache(num_blocks, kBlockSize);
  std::vector<float> logits;
  backend.forward(test::single_request_batch(ref.tokens, 0, num_blocks, /*all_logits=*/true),
                  logits);
  ASSERT_EQ(logits.size(), ref.logits.size());

  double max_diff = 0.0, sum_diff = 0.0;
  for (size_t i = 0; i < logits.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(logits[i]) - ref.logits[i]);
    max_diff = test::nan_max(max_diff, diff);
    sum_diff += diff;
  }
  const double mean_diff = sum_diff / static_cast<double>(logits.size());
  EXPECT_LE(max_diff, c.max_tolerance) << c.type;
  EXPECT_LE(mean_diff, c.mean_tolerance) << c.type;

  // Greedy ids at the steps where llama.cpp's top-two margin exceeds the max tolerance: the gap
  // between two logits moves by the difference of their errors, typically of the mean size
  // (0.15-0.2), so such a step flips only through an error far outside the tolerances.
  int num_compared = 0;
  for (size_t k = 0; k < ref.greedy_ids.size(); ++k) {
    if (ref.greedy_margins[k] <= c.max_tolerance) continue;
    const size_t row = static_cast<size_t>(ref.num_prompt - 1) + k;
    EXPECT_EQ(test::argmax(logits.data() + row * static_cast<size_t>(vocab), vocab),
              ref.greedy_ids[k])
        << c.type << " greedy step " << k << " (margin " << ref.greedy_margins[k] << ")";
    ++num_compared;
  }
  EXPECT_GE(num_compared, 10) << c.type << ": too few steps with a large enough margin";
  std::printf(
      "llama-q-%s: max |diff| %.4f, mean |diff| %.5f, greedy ids compared at %d of %zu steps\n",
      c.type.c_str(), max_diff, mean_diff, num_compared, ref.greedy_ids.size());
}

INSTANTIATE_TEST_SUITE_P(Gguf, QuantizedLlamaQ, ::testing::ValuesIn(quantized_cases()),
                         [](const auto& param_info) { return param_info.param.type; });

}  // namespace
}  // namespace sluice
