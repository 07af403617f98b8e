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

// Matrices are 2-D, norms and biases 1-D, for every role of a model with every option.
TEST(WeightRoles, EachKindHasItsShape) {
  ModelConfig c = dummy_model_config("tiny-qwen2");
  c.qk_norm = true;
  c.post_norms = true;
  for (const WeightRole role : all_weight_roles()) {
    const auto shape = weight_shape(role, c);
    const size_t rank = weight_kind(role) == WeightKind::Matrix ? 2 : 1;
    EXPECT_EQ(shape.size(), rank) << weight_role_name(role);
    EXPECT_EQ(is_norm_role(role), weight_kind(role) == WeightKind::Norm) << weight_role_name(role);
  }
  EXPECT_EQ(weight_shape(WeightRole::Wq, c), (std::vector<int64_t>{c.q_size(), c.hidden_size}));
  EXPECT_EQ(weight_shape(WeightRole::Down, c),
            (std::vector<int64_t>{c.hidden_size, c.intermediate_size}));
  EXPECT_EQ(weight_shape(WeightRole::KNorm, c), (std::vector<int64_t>{c.head_dim}));
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
