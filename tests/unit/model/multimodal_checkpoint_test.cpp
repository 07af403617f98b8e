// Qwen3.5's published Hugging Face checkpoints are multimodal: config.json nests the text model in
// text_config (model_type qwen3_5), the language model's tensors sit under
// model.language_model., beside a vision tower (model.visual.) and a multi-token-prediction head
// (mtp.). The test rebuilds the tiny qwen35 fixture in that layout and runs it: the same model,
// bit for bit, as the text-only folder.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/model/model.h"
#include "engine/model/safetensors_reader.h"
#include "engine/model/tensor_directory.h"
#include "tests/support/safetensors_writer.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const kFixture = "models/tiny-arch/qwen35/hf";

// The fixture's tensors renamed as the multimodal checkpoint names them, plus a vision and an
// MTP tensor that the text model must not need.
std::vector<test::SafetensorsTensor> multimodal_tensors(const std::string& fixture_dir) {
  TensorDirectory tensors;
  const auto file = read_safetensors(fixture_dir + "/model.safetensors", tensors);
  std::vector<test::SafetensorsTensor> out;
  for (const auto& [name, entry] : tensors.entries()) {
    const WeightTensor& t = entry.tensor;
    std::string renamed = name;
    if (name.starts_with("model.")) renamed = "model.language_model." + name.substr(6);
    out.push_back({renamed, "BF16", t.shape,
                   std::string(reinterpret_cast<const char*>(t.data), t.num_bytes)});
  }
  const std::string four_floats(16, '\0');
  out.push_back({"model.visual.patch_embed.proj.weight", "F32", {2, 2}, four_floats});
  out.push_back({"mtp.fc.weight", "F32", {2, 2}, four_floats});
  return out;
}

std::string make_multimodal_folder() {
  const std::string fixture = test::shared_path(kFixture);
  const std::string dir = test::make_temp_dir("qwen35-multimodal");
  std::ifstream in(fixture + "/config.json");
  json text = json::parse(in);
  const bool tied = text["tie_word_embeddings"].get<bool>();
  text.erase("tie_word_embeddings");
  text["model_type"] = "qwen3_5_text";
  const json config = {{"architectures", {"Qwen3_5ForConditionalGeneration"}},
                       {"model_type", "qwen3_5"},
                       {"tie_word_embeddings", tied},
                       {"text_config", text},
                       {"vision_config", {{"depth", 2}, {"hidden_size", 8}}}};
  std::ofstream(dir + "/config.json") << config.dump(2);
  for (const char* name : {"tokenizer.model", "tokenizer_config.json", "special_tokens_map.json"})
    fs::copy_file(fixture + "/" + name, dir + "/" + name, fs::copy_options::overwrite_existing);
  test::write_safetensors(dir + "/model.safetensors", multimodal_tensors(fixture));
  return dir;
}

std::vector<float> hybrid_logits(const Model& model) {
  CpuBackend backend(model, CpuBackendOptions{.num_threads = 2});
  backend.allocate_kv_cache(4, 16);
  backend.allocate_state_slots(1);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 40; ++i) tokens.push_back((37 * i + 5) % model.config.vocab_size);
  BatchInputs batch = test::single_request_batch(tokens, 0, 4, true);
  batch.state_slots = {0};
  std::vector<float> logits;
  backend.forward(batch, logits);
  return logits;
}

TEST(MultimodalCheckpoint, Qwen35LanguageModelRunsAsTheTextOnlyFolder) {
  const auto multimodal = load_model(make_multimodal_folder());
  const auto text_only = load_model(test::shared_path(kFixture));
  EXPECT_EQ(multimodal->config.architecture, "qwen35");
  EXPECT_EQ(multimodal->config.describe(), text_only->config.describe());
  EXPECT_EQ(multimodal->parameter_count(), text_only->parameter_count());
  const std::vector<float> a = hybrid_logits(*multimodal);
  const std::vector<float> b = hybrid_logits(*text_only);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace sluice
