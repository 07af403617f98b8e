// The weight-role table and the arrays indexed by it: a layer's weights are looked up by role,
// a model-wide role asked of a layer is an error (never another role's entry), each role's kind
// agrees with its shape, and a fused role's parts tile its rows.
#include "engine/model/weight_roles.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "engine/core/error.h"
#include "engine/model/dummy_model.h"
#include "engine/model/model_weights.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

TEST(LayerRoleArray, HoldsOneEntryPerLayerRole) {
  LayerRoleArray<int> values;
  int n = 0;
  for (const WeightRole role : all_weight_roles()) {
    if (is_layer_role(role)) values[role] = ++n;
  }
  EXPECT_EQ(n, static_cast<int>(kNumLayerWeightRoles));
  EXPECT_EQ(values[WeightRole::AttnNorm], 1);
  EXPECT_EQ(values[WeightRole::Down], static_cast<int>(WeightRole::Down) + 1);
}

TEST(LayerRoleArray, AModelWideRoleIsAnErrorNamingIt) {
  LayerWeights layer;
  for (const WeightRole role :
       {WeightRole::TokenEmbedding, WeightRole::FinalNorm, WeightRole::LmHead}) {
    try {
      (void)layer[role];
      ADD_FAILURE() << weight_role_name(role) << " was looked up in a layer";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(weight_role_name(role)));
    }
  }
}

// Matrices are 2-D, norms and biases 1-D (but the DeltaNet's conv taps, [channels, taps]), expert
// stacks one dimension more (the expert), for every role of a model with every option.
TEST(WeightRoles, EachKindHasItsShape) {
  ModelConfig c = dummy_model_config("tiny-qwen2");
  c.qk_norm = true;
  c.post_norms = true;
  c.num_experts = 5;
  c.num_experts_used = 2;
  c.expert_intermediate_size = 48;
  for (const WeightRole role : all_weight_roles()) {
    const auto shape = weight_shape(role, c);
    const WeightKind kind = weight_kind(role);
    const size_t rank = kind == WeightKind::Matrix           ? 2
                        : kind == WeightKind::ExpertMatrices ? 3
                        : kind == WeightKind::ExpertBiases   ? 2
                        : role == WeightRole::SsmConv        ? 2
                                                             : 1;
    EXPECT_EQ(shape.size(), rank) << weight_role_name(role);
    if (is_expert_role(role)) {
      EXPECT_EQ(shape[0], 5) << weight_role_name(role);
      EXPECT_EQ(std::vector<int64_t>(shape.begin() + 1, shape.end()), expert_slice_shape(role, c));
    }
    EXPECT_EQ(is_norm_role(role), weight_kind(role) == WeightKind::Norm) << weight_role_name(role);
  }
  EXPECT_EQ(weight_shape(WeightRole::Wq, c), (std::vector<int64_t>{c.q_size(), c.hidden_size}));
  EXPECT_EQ(weight_shape(WeightRole::Down, c),
            (std::vector<int64_t>{c.hidden_size, c.intermediate_size}));
  EXPECT_EQ(weight_shape(WeightRole::KNorm, c), (std::vector<int64_t>{c.head_dim}));
  EXPECT_EQ(weight_shape(WeightRole::Router, c), (std::vector<int64_t>{5, c.hidden_size}));
  EXPECT_EQ(weight_shape(WeightRole::DownExps, c), (std::vector<int64_t>{5, c.hidden_size, 48}));
  EXPECT_EQ(weight_shape(WeightRole::Sinks, c), (std::vector<int64_t>{c.num_heads}));
}

// The names of the router and experts in each format, per architecture.
TEST(WeightRoles, ExpertTensorsAreNamedAsEachFamilyNamesThem) {
  const Architecture& qwen = *find_hf_architecture("qwen3_moe");
  const Architecture& mixtral = *find_hf_architecture("mixtral");
  const Architecture& oss = *find_hf_architecture("gpt_oss");
  using enum WeightRole;
  using enum NameScheme;
  EXPECT_EQ(tensor_name(GateExps, qwen, Gguf, 3), "blk.3.ffn_gate_exps.weight");
  EXPECT_EQ(tensor_name(GateExps, qwen, HuggingFace, 3, 7),
            "model.layers.3.mlp.experts.7.gate_proj.weight");
  EXPECT_EQ(tensor_name(UpExps, mixtral, HuggingFace, 0, 2),
            "model.layers.0.block_sparse_moe.experts.2.w3.weight");
  EXPECT_EQ(tensor_name(DownExps, mixtral, HuggingFace, 0, 2),
            "model.layers.0.block_sparse_moe.experts.2.w2.weight");
  EXPECT_EQ(tensor_name(Router, mixtral, HuggingFace, 1),
            "model.layers.1.block_sparse_moe.gate.weight");
  EXPECT_EQ(tensor_name(Router, qwen, HuggingFace, 1), "model.layers.1.mlp.gate.weight");
  EXPECT_EQ(tensor_name(RouterBias, oss, HuggingFace, 1), "model.layers.1.mlp.router.bias");
  EXPECT_EQ(tensor_name(FfnNorm, oss, Gguf, 1), "blk.1.post_attention_norm.weight");
  EXPECT_EQ(tensor_name(FfnNorm, qwen, Gguf, 1), "blk.1.ffn_norm.weight");
  EXPECT_EQ(tensor_name(Sinks, oss, Gguf, 0), "blk.0.attn_sinks.weight");
}

TEST(WeightRoles, AFusedRolesPartsTileItsRows) {
  const ModelConfig c = dummy_model_config("tiny-qwen2");
  int num_fused = 0;
  for (const WeightRole role : all_weight_roles()) {
    const auto parts = fused_parts(role);
    if (parts.empty()) continue;
    ++num_fused;
    const auto shape = weight_shape(role, c);
    int64_t rows = 0;
    for (const WeightRole part : parts) {
      EXPECT_TRUE(fused_parts(part).empty());
      EXPECT_EQ(weight_shape(part, c)[1], shape[1]) << weight_role_name(part);
      rows += weight_shape(part, c)[0];
    }
    EXPECT_EQ(rows, shape[0]) << weight_role_name(role);
  }
  EXPECT_EQ(num_fused, 2);  // Wqkv, GateUp
}

}  // namespace
}  // namespace sluice
