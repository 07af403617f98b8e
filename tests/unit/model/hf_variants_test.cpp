// Hugging Face variants built from the real stories260K checkpoint: a sharded checkpoint must
// load to identical weights, and the Qwen2 path (q/k/v biases) must compute exactly the Llama
// model when the biases are zero and something else when they are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/model/model.h"
#include "engine/model/safetensors_reader.h"
#include "tests/support/reference_data.h"
#include "tests/support/safetensors_writer.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::vector<test::SafetensorsTensor> real_tensors() {
  TensorDirectory directory;
  const auto file = read_safetensors(test::shared_path("models/stories260K/hf/model.safetensors"), directory);
  std::vector<test::SafetensorsTensor> out;
  for (const auto& [name, entry] : directory.entries()) {
    out.push_back({name, entry.type_name, entry.tensor.shape,
                   std::string(reinterpret_cast<const char*>(entry.tensor.data), entry.tensor.num_bytes)});
  }
  return out;
}

std::string copy_hf_metadata(const std::string& name) {
  const std::string dir = test::make_temp_dir(name);
  for (const char* file : {"config.json", "tokenizer.model", "tokenizer_config.json"}) {
    fs::copy_file(test::shared_path(std::string("models/stories260K/hf/") + file), dir + "/" + file);
  }
  return dir;
}

std::vector<float> prompt_logits(const Model& model) {
  CpuBackend backend(model, CpuBackendOptions{.num_threads = 1});
  backend.allocate_kv_cache(4, 16);
  BatchInputs in;
  const auto prompt = test::reference_prompt_ids();
  for (size_t i = 0; i < prompt.size(); ++i) {
    in.token_ids.push_back(prompt[i]);
    in.positions.push_back(static_cast<int32_t>(i));
    in.slot_mapping.push_back(static_cast<int64_t>(i));
  }
  in.query_start_loc = {0, static_cast<int32_t>(prompt.size())};
  in.seq_lens = {static_cast<int32_t>(prompt.size())};
  in.block_tables = {0};
  in.max_blocks_per_request = 1;
  in.logits_indices = {static_cast<int32_t>(prompt.size()) - 1};
  std::vector<float> logits;
  backend.forward(in, logits);
  return logits;
}

TEST(HfVariants, ShardedCheckpointLoadsTheSameWeights) {
  const std::string dir = copy_hf_metadata("sharded");
  auto tensors = real_tensors();
  std::vector<test::SafetensorsTensor> shard_a, shard_b;
  nlohmann::json index;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool first = i % 2 == 0;
    index["weight_map"][tensors[i].name] = first ? "model-00001-of-00002.safetensors" : "model-00002-of-00002.safetensors";
    (first ? shard_a : shard_b).push_back(tensors[i]);
  }
  test::write_safetensors(dir + "/model-00001-of-00002.safetensors", shard_a);
  test::write_safetensors(dir + "/model-00002-of-00002.safetensors", shard_b);
  test::write_file(dir + "/model.safetensors.index.json", index.dump());
  const auto sharded = load_model(dir);
  EXPECT_EQ(sharded->files.size(), 2u);
  EXPECT_EQ(prompt_logits(*sharded), prompt_logits(*load_model(test::shared_path("models/stories260K/hf"))));

  // An index naming a tensor its shard lacks is an error naming both.
  index["weight_map"]["model.extra.weight"] = "model-00001-of-00002.safetensors";
  test::write_file(dir + "/model.safetensors.index.json", index.dump());
  try {
    load_model(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("model.extra.weight"));
    EXPECT_THAT(e.what(), HasSubstr("model-00001-of-00002.safetensors"));
  }
}

// Writes the checkpoint as a Qwen2 model with q/k/v biases of the given value.
std::string qwen2_dir(const std::string& name, float bias) {
  const std::string dir = copy_hf_metadata(name);
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  config["model_type"] = "qwen2";
  config["architectures"] = {"Qwen2ForCausalLM"};
  config["use_sliding_window"] = false;
  test::write_file(dir + "/config.json", config.dump());
  auto tensors = real_tensors();
  const int q = 64, kv = 32;
  for (int l = 0; l < 5; ++l) {
    for (const auto& [proj, size] : std::vector<std::pair<std::string, int>>{{"q_proj", q}, {"k_proj", kv}, {"v_proj", kv}}) {
      std::vector<float> values(static_cast<size_t>(size), bias);
      tensors.push_back({"model.layers." + std::to_string(l) + ".self_attn." + proj + ".bias", "F32", {size},
                         std::string(reinterpret_cast<const char*>(values.data()), values.size() * 4)});
    }
  }
  test::write_safetensors(dir + "/model.safetensors", tensors);
  return dir;
}

TEST(HfVariants, Qwen2BiasesAreLoadedAndApplied) {
  const auto llama = prompt_logits(*load_model(test::shared_path("models/stories260K/hf")));
  const auto zero_bias = load_model(qwen2_dir("qwen-zero", 0.0f));
  EXPECT_TRUE(zero_bias->config.has_qkv_bias);
  EXPECT_EQ(zero_bias->config.architecture, "qwen2");
  EXPECT_EQ(prompt_logits(*zero_bias), llama);
  EXPECT_NE(prompt_logits(*load_model(qwen2_dir("qwen-bias", 0.25f))), llama);
}

TEST(HfVariants, Qwen2WithoutBiasesIsAnErrorNamingTheTensor) {
  const std::string dir = copy_hf_metadata("qwen-nobias");
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  config["model_type"] = "qwen2";
  test::write_file(dir + "/config.json", config.dump());
  fs::copy_file(test::shared_path("models/stories260K/hf/model.safetensors"), dir + "/model.safetensors");
  try {
    load_model(dir);
    FAIL();
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("model.layers.0.self_attn.q_proj.bias"));
  }
}

TEST(HfVariants, MistralSlidingWindowIsAWindowOnEveryLayerNotACapOnTheContext) {
  const std::string dir = copy_hf_metadata("mistral");
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  config["model_type"] = "mistral";
  config["sliding_window"] = 256;
  test::write_file(dir + "/config.json", config.dump());
  fs::copy_file(test::shared_path("models/stories260K/hf/model.safetensors"), dir + "/model.safetensors");
  const auto model = load_model(dir);
  const int context = nlohmann::json::parse(test::read_file(dir + "/config.json"))
                          .at("max_position_embeddings")
                          .get<int>();
  EXPECT_EQ(model->config.max_position_embeddings, context);
  EXPECT_EQ(model->config.sliding_window, 256);
  for (const LayerConfig& l : model->config.layers) EXPECT_EQ(l.sliding_window, 256);
  EXPECT_EQ(model->config.kv_window(), 256);
}

}  // namespace
}  // namespace sluice
