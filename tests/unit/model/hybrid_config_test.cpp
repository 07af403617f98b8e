// The configuration of the hybrid models (Qwen3.5) as each format states it: layer kinds, the
// Gated DeltaNet's shape and value-head order, gated attention and the shared expert; and damaged
// configurations refused with the key that is wrong.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/model/gguf_config.h"
#include "engine/model/gguf_reader.h"
#include "engine/model/hf_config.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using nlohmann::json;

std::vector<LayerKind> kinds(const ModelConfig& c) {
  std::vector<LayerKind> out;
  for (const LayerConfig& l : c.layers) out.push_back(l.kind);
  return out;
}

constexpr LayerKind D = LayerKind::DeltaNet;
constexpr LayerKind A = LayerKind::Attention;

TEST(HybridConfig, GgufAndHfStateTheSameModelButTheValueHeadOrder) {
  const auto gguf =
      GgufFile::open(test::shared_path("models/tiny-arch/qwen35/gguf/qwen35-F32.gguf"));
  const ModelConfig g = read_gguf_config(*gguf);
  const ModelConfig h = read_hf_config(test::shared_path("models/tiny-arch/qwen35/hf/config.json"));
  for (const ModelConfig* c : {&g, &h}) {
    EXPECT_EQ(c->architecture, "qwen35");
    EXPECT_EQ(kinds(*c), (std::vector<LayerKind>{D, D, D, A}));
    EXPECT_EQ(c->deltanet.num_k_heads, 2);
    EXPECT_EQ(c->deltanet.num_v_heads, 4);
    EXPECT_EQ(c->deltanet.k_head_dim, 64);
    EXPECT_EQ(c->deltanet.v_head_dim, 64);
    EXPECT_EQ(c->deltanet.conv_kernel, 4);
    EXPECT_TRUE(c->attn_output_gate);
    EXPECT_EQ(c->rope_dims(), 16);
    EXPECT_EQ(c->rope_theta, 1e7f);
    EXPECT_EQ(c->num_attention_layers(), 1);
  }
  // The converter tiles the value heads (m reads key head m % 2), transformers groups them.
  EXPECT_FALSE(g.deltanet.grouped_v_heads);
  EXPECT_TRUE(h.deltanet.grouped_v_heads);
  EXPECT_EQ((std::vector<int>{g.deltanet.key_head_of(0), g.deltanet.key_head_of(1),
                              g.deltanet.key_head_of(2), g.deltanet.key_head_of(3)}),
            (std::vector<int>{0, 1, 0, 1}));
  EXPECT_EQ((std::vector<int>{h.deltanet.key_head_of(0), h.deltanet.key_head_of(1),
                              h.deltanet.key_head_of(2), h.deltanet.key_head_of(3)}),
            (std::vector<int>{0, 0, 1, 1}));
  // Norms: HF stores w for 1 + w; GGUF files store 1 + w.
  EXPECT_EQ(h.norm_weight_offset, 1.0f);
  EXPECT_EQ(g.norm_weight_offset, 0.0f);
}

TEST(HybridConfig, MoeHasItsSharedExpert) {
  const auto gguf =
      GgufFile::open(test::shared_path("models/tiny-arch/qwen35moe/gguf/qwen35moe-F32.gguf"));
  const ModelConfig g = read_gguf_config(*gguf);
  const ModelConfig h =
      read_hf_config(test::shared_path("models/tiny-arch/qwen35moe/hf/config.json"));
  for (const ModelConfig* c : {&g, &h}) {
    EXPECT_EQ(c->architecture, "qwen35moe");
    EXPECT_EQ(kinds(*c), (std::vector<LayerKind>{D, A}));
    EXPECT_EQ(c->num_experts, 4);
    EXPECT_EQ(c->num_experts_used, 2);
    EXPECT_EQ(c->shared_expert_intermediate_size, 256);
  }
}

// A copy of the fixture's config.json with `edit` applied; returns the error read_hf_config
// gives ("" when it reads the file).
std::string hf_error(const std::function<void(json&)>& edit) {
  std::ifstream in(test::shared_path("models/tiny-arch/qwen35/hf/config.json"));
  json j = json::parse(in);
  edit(j);
  const std::string path = test::make_temp_dir("hybrid-config") + "/config.json";
  std::ofstream(path) << j.dump();
  try {
    read_hf_config(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(HybridConfig, DamagedConfigsAreRefusedByName) {
  EXPECT_EQ(hf_error([](json&) {}), "");
  EXPECT_NE(hf_error([](json& j) {
              j["linear_num_value_heads"] = 3;
            }).find("value heads are not a multiple"),
            std::string::npos);
  EXPECT_NE(hf_error([](json& j) { j["linear_key_head_dim"] = 1 << 20; }).find("out of range"),
            std::string::npos);
  EXPECT_NE(hf_error([](json& j) { j["linear_conv_kernel_dim"] = 0; }).find("out of range"),
            std::string::npos);
  EXPECT_NE(hf_error([](json& j) {
              j["layer_types"] = {"linear_attention", "linear_attention", "linear_attention",
                                  "linear_attention"};
            }).find("at least one attention layer"),
            std::string::npos);
  EXPECT_NE(
      hf_error([](json& j) {
        j["layer_types"] = {"linear_attention", "mamba", "linear_attention", "full_attention"};
      }).find("layer_types[1]"),
      std::string::npos);
  EXPECT_NE(hf_error([](json& j) { j.erase("linear_num_value_heads"); }).find("linear_"),
            std::string::npos);
}

}  // namespace
}  // namespace sluice
