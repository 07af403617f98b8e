// Mixture-of-experts configurations that must be refused or honoured, from copies of the
// tiny-arch qwen3moe Hugging Face folder (../shared/models/tiny-arch/qwen3moe/hf: 4 experts,
// top-2, norm_topk_prob true) with one thing changed: each error names the key or tensor at fault.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/model/model.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/support/tiny_arch_reference.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kQwenMoe = "models/tiny-arch/qwen3moe/hf/";

// A copy of the folder whose config.json `edit` changes.
template <typename Edit>
std::string edited_folder(const std::string& name, Edit edit) {
  const std::string dir = test::make_temp_dir(name);
  for (const auto& entry : fs::directory_iterator(test::shared_path(kQwenMoe)))
    fs::copy_file(entry.path(), dir + "/" + entry.path().filename().string());
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  edit(config);
  fs::remove(dir + "/config.json");
  test::write_file(dir + "/config.json", config.dump());
  return dir;
}

std::string load_error(const std::string& dir) {
  try {
    load_model(dir);
  } catch (const Error& e) {
    return e.what();
  }
  return "(loaded)";
}

TEST(MoeConfig, MoreExpertsPerTokenThanExpertsIsRefusedByKey) {
  const auto dir = edited_folder("moe-topk", [](auto& c) { c["num_experts_per_tok"] = 5; });
  EXPECT_THAT(load_error(dir), HasSubstr("num_experts_per_tok is 5"));
}

TEST(MoeConfig, DenseLayersAmongSparseOnesAreRefused) {
  const auto dir = edited_folder("moe-dense", [](auto& c) { c["mlp_only_layers"] = {0}; });
  EXPECT_THAT(load_error(dir), HasSubstr("mlp_only_layers"));
}

TEST(MoeConfig, AnExpertCountTheFilesDoNotHoldIsNamedByTheRouter) {
  const auto dir = edited_folder("moe-five", [](auto& c) { c["num_experts"] = 5; });
  EXPECT_THAT(load_error(dir),
              HasSubstr("tensor model.layers.0.mlp.gate.weight has shape [4, 256] but the model "
                        "configuration implies [5, 256]"));
}

TEST(MoeConfig, AnAbsurdExpertCountIsRefusedBeforeAnythingIsSized) {
  const auto dir = edited_folder("moe-huge", [](auto& c) { c["num_experts"] = 1 << 30; });
  EXPECT_THAT(load_error(dir), HasSubstr("num_experts is 1073741824"));
}

// transformers' Qwen3-MoE renormalises the chosen weights only with norm_topk_prob; without it
// the model is another one (the README's sensitivity: 3.15 from llama.cpp's logits).
TEST(MoeConfig, NormTopkProbFalseKeepsThePlainProbabilities) {
  const auto dir = edited_folder("moe-nonorm", [](auto& c) { c["norm_topk_prob"] = false; });
  const auto model = load_model(dir);
  EXPECT_FALSE(model->config.moe_renormalize);
  const test::TinyArchReference ref =
      test::read_tiny_arch_reference(test::shared_path("models/tiny-arch/qwen3moe/expected/F32"));
  CpuBackend backend(*model, CpuBackendOptions{.num_threads = 2});
  backend.allocate_kv_cache(8, 16);
  std::vector<float> logits;
  backend.forward(test::single_request_batch(ref.tokens, 0, 8, true), logits);
  float worst = 0.0f;
  const int vocab = model->config.vocab_size;
  for (size_t t = 0; t < ref.tokens.size(); ++t) {
    worst = std::max(worst, test::max_row_difference(logits.data() + t * vocab,
                                                     ref.logits.data() + t * vocab, vocab));
  }
  EXPECT_GT(worst, 1.0f);
}

}  // namespace
}  // namespace sluice
