// The CPU backend's mixture-of-experts FFN: the router's top-k rules on hand-made logits, the
// experts each token of the tiny-arch MoE models (../shared/models/tiny-arch, README "2026
// additions") chooses against llama.cpp's own choice (moe_topk.json), and the quantized MoE
// files against llama.cpp's logits on the same file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cpu/cpu_moe.h"
#include "engine/model/model.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/support/tiny_arch_reference.h"

namespace sluice {
namespace {

// ---- routing rules --------------------------------------------------------------------------

MoeOptions options_for(MoeGating gating, int num_experts, int top_k, bool renormalize = true) {
  return MoeOptions{
      .num_experts = num_experts, .top_k = top_k, .gating = gating, .renormalize = renormalize};
}

TEST(CpuMoeRouting, SoftmaxTopKPicksTheLargestAndRenormalises) {
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f};
  ExpertChoice choice;
  choose_experts(logits, 1, options_for(MoeGating::SoftmaxTopK, 4, 2), choice);
  EXPECT_EQ(choice.ids[0], 1);
  EXPECT_EQ(choice.ids[1], 3);
  // softmax then renormalised over the two = softmax over the two chosen logits.
  const double w0 = 1.0 / (1.0 + std::exp(1.0 - 2.0));
  EXPECT_NEAR(choice.weights[0], w0, 1e-6);
  EXPECT_NEAR(choice.weights[1], 1.0 - w0, 1e-6);
}

TEST(CpuMoeRouting, WithoutRenormalisationTheWeightsAreTheProbabilities) {
  const float logits[] = {0.5f, 2.0f, -1.0f, 1.0f};
  ExpertChoice choice;
  choose_experts(logits, 1, options_for(MoeGating::SoftmaxTopK, 4, 2, false), choice);
  double sum = 0.0;
  for (const float l : logits) sum += std::exp(l);
  EXPECT_NEAR(choice.weights[0], std::exp(2.0) / sum, 1e-6);
  EXPECT_NEAR(choice.weights[1], std::exp(1.0) / sum, 1e-6);
}

TEST(CpuMoeRouting, TopKSoftmaxWeighsTheChosenLogitsAlone) {
  const float logits[] = {3.0f, -2.0f, 2.5f, 0.0f, 2.9f};  // two tokens' rows would follow
  ExpertChoice choice;
  choose_experts(logits, 1, options_for(MoeGating::TopKSoftmax, 5, 3), choice);
  EXPECT_EQ((std::vector<int32_t>(choice.ids.begin(), choice.ids.begin() + 3)),
            (std::vector<int32_t>{0, 4, 2}));
  const double z = std::exp(3.0) + std::exp(2.9) + std::exp(2.5);
  EXPECT_NEAR(choice.weights[0], std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(choice.weights[2], std::exp(2.5) / z, 1e-6);
}

TEST(CpuMoeRouting, TiesGoToTheLowerExpertAndTokensAreIndependent) {
  const float logits[] = {1.0f, 1.0f, 1.0f,   // token 0: a three-way tie
                          0.0f, 5.0f, 4.0f};  // token 1
  ExpertChoice choice;
  choose_experts(logits, 2, options_for(MoeGating::SoftmaxTopK, 3, 2), choice);
  EXPECT_EQ(choice.ids[0], 0);
  EXPECT_EQ(choice.ids[1], 1);
  EXPECT_FLOAT_EQ(choice.weights[0], 0.5f);
  EXPECT_EQ(choice.ids[2], 1);
  EXPECT_EQ(choice.ids[3], 2);
}

// ---- the tiny-arch MoE models against llama.cpp --------------------------------------------

constexpr int kMoeBlockSize = 16;
constexpr int kMoeNumBlocks = 8;

std::string tiny(const std::string& model, const std::string& rest) {
  return test::shared_path("models/tiny-arch/" + model + "/" + rest);
}

// llama.cpp's expert ids per layer and token (moe_topk.json), rank 0 first.
std::map<int, std::vector<std::vector<int32_t>>> read_topk(const std::string& path) {
  const auto j = nlohmann::json::parse(test::read_file(path));
  std::map<int, std::vector<std::vector<int32_t>>> out;
  for (const auto& [layer, rows] : j.at("layers").items())
    out[std::stoi(layer)] = rows.get<std::vector<std::vector<int32_t>>>();
  return out;
}

struct MoeRun {
  std::vector<float> logits;                             // [tokens, vocab]
  std::map<int, std::vector<std::vector<int32_t>>> ids;  // [layer][token] chosen experts
};

// The reference sequence teacher-forced in one batch, recording each layer's choice.
MoeRun run_moe(const Model& model, const std::vector<int32_t>& tokens) {
  MoeRun run;
  const int k = model.config.num_experts_used;
  CpuBackendOptions options{.num_threads = 2};
  options.on_experts_chosen = [&](int layer, std::span<const int32_t> ids) {
    auto& rows = run.ids[layer];
    for (size_t t = 0; t * k < ids.size(); ++t)
      rows.emplace_back(ids.begin() + static_cast<std::ptrdiff_t>(t * k),
                        ids.begin() + static_cast<std::ptrdiff_t>((t + 1) * k));
  };
  CpuBackend backend(model, options);
  backend.allocate_kv_cache(kMoeNumBlocks, kMoeBlockSize);
  backend.forward(test::single_request_batch(tokens, 0, kMoeNumBlocks, true), run.logits);
  return run;
}

struct MoeFileCase {
  const char* model;
  const char* type;
  float min_same_order;  // the share of (token, layer) choices equal to llama.cpp's, in order
  float max_tolerance;   // max |logit - llama.cpp| over every logit
  float mean_tolerance;
};

void PrintTo(const MoeFileCase& c, std::ostream* os) {
  *os << c.model << "-" << c.type;
}

// Unquantized files route exactly as llama.cpp (the README's smallest k-th/(k+1)-th router gap
// is 0.064). Quantized files: Sluice quantizes activations as ggml does, so the expert choices
// are llama.cpp's own on that file except where two router logits nearly tie; a flipped choice
// moves that token's logits by whole units. The Q8_0 tolerances are the dense llama-q file's
// (quantized_gguf_test.cpp: max 0.6, mean 0.1, measured 0.377 / 0.051 there), the max raised for
// gpt-oss's larger activations. Measured (experts as llama.cpp's, max, mean): qwen3moe Q8_0
// 122/124, 0.577, 0.043; mixtral Q8_0 62/62, 0.316, 0.035; mixtral Q4_K_M 62/62, 0.072, 0.0003;
// gpt-oss Q8_0 124/124, 0.731, 0.047; F32 files 2e-5 to 9e-5; F16 as in tiny_arch_forward_test.
const MoeFileCase kFileCases[] = {
    {"qwen3moe", "F32", 1.0f, 1e-3f, 1e-4f},  {"qwen3moe", "F16", 1.0f, 0.05f, 0.01f},
    {"qwen3moe", "Q8_0", 0.98f, 1.0f, 0.1f},  {"mixtral", "F32", 1.0f, 1e-3f, 1e-4f},
    {"mixtral", "F16", 1.0f, 0.05f, 0.01f},   {"mixtral", "Q8_0", 0.98f, 1.0f, 0.1f},
    {"mixtral", "Q4_K_M", 0.98f, 0.6f, 0.1f}, {"gpt-oss", "F32", 1.0f, 1e-3f, 1e-4f},
    {"gpt-oss", "F16", 1.0f, 0.15f, 0.02f},   {"gpt-oss", "Q8_0", 0.98f, 1.0f, 0.1f},
    {"gpt-oss", "MXFP4", 1.0f, 1e-3f, 1e-4f},
};

class TinyArchMoe : public ::testing::TestWithParam<MoeFileCase> {};

TEST_P(TinyArchMoe, ExpertsAndLogitsFollowLlamaCppOnItsOwnFile) {
  const MoeFileCase& c = GetParam();
  const std::string name = std::string(c.model) + "-" + c.type;
  const auto model = load_model(tiny(c.model, "gguf/" + name + ".gguf"));
  ASSERT_TRUE(model->config.is_moe());
  const std::string expected = tiny(c.model, std::string("expected/") + c.type);
  const test::TinyArchReference ref = test::read_tiny_arch_reference(expected);
  const auto reference_ids = read_topk(expected + "/moe_topk.json");
  const MoeRun run = run_moe(*model, ref.tokens);

  size_t same = 0, total = 0;
  for (const auto& [layer, rows] : reference_ids) {
    ASSERT_EQ(run.ids.at(layer).size(), rows.size()) << name << " layer " << layer;
    for (size_t t = 0; t < rows.size(); ++t) {
      same += run.ids.at(layer)[t] == rows[t] ? 1 : 0;
      ++total;
    }
  }
  const double same_share = static_cast<double>(same) / static_cast<double>(total);
  EXPECT_GE(same_share, c.min_same_order) << name;

  const int vocab = model->config.vocab_size;
  ASSERT_EQ(run.logits.size(), ref.logits.size());
  double max_diff = 0.0, sum_diff = 0.0;
  for (size_t i = 0; i < run.logits.size(); ++i) {
    const double d = std::fabs(static_cast<double>(run.logits[i]) - ref.logits[i]);
    max_diff = std::max(max_diff, d);
    sum_diff += d;
  }
  const double mean_diff = sum_diff / static_cast<double>(run.logits.size());
  EXPECT_LE(max_diff, c.max_tolerance) << name;
  EXPECT_LE(mean_diff, c.mean_tolerance) << name;
  int compared = 0;
  for (size_t k = 0; k < ref.greedy_margins.size(); ++k) {
    const size_t row = static_cast<size_t>(ref.n_prompt) - 1 + k;
    if (row + 1 >= ref.tokens.size() || ref.greedy_margins[k] <= 2.0 * c.max_tolerance) continue;
    EXPECT_EQ(test::argmax(run.logits.data() + row * static_cast<size_t>(vocab), vocab),
              ref.tokens[row + 1])
        << name << " greedy step " << k;
    ++compared;
  }
  std::printf(
      "[ measured ] %s: experts as llama.cpp's %zu of %zu, max |diff| %.5f, mean %.6f, "
      "greedy ids compared at %d steps\n",
      name.c_str(), same, total, max_diff, mean_diff, compared);
}

INSTANTIATE_TEST_SUITE_P(Files, TinyArchMoe, ::testing::ValuesIn(kFileCases),
                         [](const auto& param_info) {
                           std::string n =
                               std::string(param_info.param.model) + "_" + param_info.param.type;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

// gpt-oss's Hugging Face folder holds the experts in openai's MXFP4 layout (gate and up rows
// interleaved), repacked at load. With llama.cpp's YaRN rule (the ramp's ends rounded, which the
// folder's truncate: false turns off) it is the MXFP4 GGUF made from it, to llama.cpp's F32
// precision.
TEST(TinyArchMoe, GptOssFolderIsTheMxfp4FileUnderLlamaCppsYarnRule) {
  const auto model = load_model(tiny("gpt-oss", "hf"));
  ASSERT_FALSE(model->config.rope_scaling.yarn_truncate);
  EXPECT_EQ(model->weights.experts[0][WeightRole::GateExps][1].dtype, DType::MXFP4);
  model->config.rope_scaling.yarn_truncate = true;
  for (LayerConfig& l : model->config.layers) l.rope_scaling.yarn_truncate = true;
  const test::TinyArchReference ref =
      test::read_tiny_arch_reference(tiny("gpt-oss", "expected/MXFP4"));
  const MoeRun run = run_moe(*model, ref.tokens);
  const int vocab = model->config.vocab_size;
  float worst = 0.0f;
  for (size_t t = 0; t < ref.tokens.size(); ++t) {
    worst = std::max(worst, test::max_row_difference(run.logits.data() + t * vocab,
                                                     ref.logits.data() + t * vocab, vocab));
  }
  EXPECT_LT(worst, 1e-3f);
  std::printf("[ measured ] gpt-oss hf with llama.cpp's YaRN rule: max |diff| %.6f\n", worst);
}

// Each token's logits are the same bits whether it runs alone, in a step with other requests'
// tokens (which choose other experts), or one step at a time.
TEST(TinyArchMoe, ATokensResultDoesNotDependOnItsNeighbours) {
  const auto model = load_model(tiny("qwen3moe", "gguf/qwen3moe-Q8_0.gguf"));
  const test::TinyArchReference ref =
      test::read_tiny_arch_reference(tiny("qwen3moe", "expected/Q8_0"));
  const std::vector<int32_t> a(ref.tokens.begin(), ref.tokens.begin() + 20);
  const std::vector<int32_t> b(ref.tokens.begin() + 20, ref.tokens.begin() + 45);
  CpuBackend alone(*model, CpuBackendOptions{.num_threads = 2});
  alone.allocate_kv_cache(kMoeNumBlocks, kMoeBlockSize);
  std::vector<float> a_alone;
  alone.forward(test::single_request_batch(a, 0, kMoeNumBlocks, true), a_alone);

  // a and b in one step: b's blocks after a's.
  BatchInputs both = test::single_request_batch(a, 0, kMoeNumBlocks / 2, true);
  const BatchInputs second = test::single_request_batch(b, 0, kMoeNumBlocks / 2, true);
  const int na = static_cast<int>(a.size());
  for (size_t i = 0; i < b.size(); ++i) {
    both.token_ids.push_back(b[i]);
    both.positions.push_back(second.positions[i]);
    both.slot_mapping.push_back(second.slot_mapping[i] + kMoeNumBlocks / 2 * kMoeBlockSize);
    both.logits_indices.push_back(na + static_cast<int>(i));
  }
  both.query_start_loc.push_back(na + static_cast<int>(b.size()));
  both.seq_lens.push_back(static_cast<int>(b.size()));
  for (int blk = 0; blk < kMoeNumBlocks / 2; ++blk)
    both.block_tables.push_back(kMoeNumBlocks / 2 + blk);
  CpuBackend shared(*model, CpuBackendOptions{.num_threads = 2});
  shared.allocate_kv_cache(kMoeNumBlocks, kMoeBlockSize);
  std::vector<float> together;
  shared.forward(both, together);
  const auto vocab = static_cast<size_t>(model->config.vocab_size);
  ASSERT_EQ(together.size(), (a.size() + b.size()) * vocab);
  EXPECT_TRUE(std::equal(a_alone.begin(), a_alone.end(), together.begin()))
      << "request a's logits changed when b shared its steps";
}

}  // namespace
}  // namespace sluice
