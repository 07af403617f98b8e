// The CPU backend holds a layer's weights by role and looks each one up when the forward pass
// asks for it: a role the layer lacks is an error naming the role and layer, never another
// role's weights.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/core/error.h"
#include "engine/model/dummy_model.h"
#include "tests/support/single_request_batch.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string forward_refusal(const Model& model) {
  CpuBackend backend(model, CpuBackendOptions{.num_threads = 1});
  backend.allocate_kv_cache(2, 16);
  std::vector<float> logits;
  try {
    backend.forward(test::single_request_batch({1, 2, 3}, 0, 2, false), logits);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CpuBackendRoles, TheWholeModelRuns) {
  const auto model = make_dummy_model("tiny-qwen2");
  EXPECT_EQ(forward_refusal(*model), "");
}

TEST(CpuBackendRoles, AMatrixOrNormTheLayerLacksIsAnErrorNamingIt) {
  const std::pair<WeightRole, const char*> cases[] = {
      {WeightRole::Down, "ffn_down in layer 1"},  {WeightRole::Wo, "attn_output in layer 1"},
      {WeightRole::Up, "ffn_up in layer 1"},      {WeightRole::FfnNorm, "ffn_norm in layer 1"},
      {WeightRole::Bk, "attn_k.bias in layer 1"},
  };
  for (const auto& [role, message] : cases) {
    const auto model = make_dummy_model("tiny-qwen2");
    model->weights.layers[1][role] = WeightTensor{};
    EXPECT_THAT(forward_refusal(*model), HasSubstr(message)) << weight_role_name(role);
  }
}

}  // namespace
}  // namespace sluice
