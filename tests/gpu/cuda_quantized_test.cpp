// Quantized GGUF files through the CUDA backend, their weights kept in their blocks: every block
// type of the llama-q fixture (and the Q4_K_M mix of Q4_K and Q6_K, whose q|k|v stack holds two
// types) against the CPU backend on the same weights widened to fp32, through both product
// kernels (a 62-token prefill takes the tile kernel, a 12-token one the GEMV) and the chunks
// widened for cuBLAS that counts past their measured range take, and the device
// memory the weights take: their bytes in the file, not a widened copy. MXFP4, which llama-q
// lacks, on a dummy model's blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/cuda/cuda_backend.h"
#include "engine/backend/cuda/cuda_weight_layout.h"
#include "engine/core/dequantize.h"
#include "engine/model/dummy_model.h"
#include "engine/model/model.h"
#include "tests/gpu/gpu_test_support.h"
#include "tests/support/float_compare.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"
#include "tests/support/widened_model.h"

namespace sluice {
namespace {

constexpr int kQuantBlockSize = 16;
const std::string kLlamaQ = "models/tiny-arch/llama-q/";

std::vector<int32_t> fixture_tokens(const std::string& type) {
  return nlohmann::json::parse(
             test::read_file(test::shared_path(kLlamaQ + "expected/" + type + "/logits.json")))
      .at("tokens")
      .get<std::vector<int32_t>>();
}

// Every position's logits of `tokens` as one prefill on a fresh KV cache.
std::vector<float> prefill_logits(Backend& backend, const std::vector<int32_t>& tokens) {
  const int num_blocks = static_cast<int>(tokens.size() + kQuantBlockSize - 1) / kQuantBlockSize;
  backend.allocate_kv_cache(num_blocks, kQuantBlockSize);
  std::vector<float> logits;
  backend.forward(test::single_request_batch(tokens, 0, num_blocks, /*all_logits=*/true), logits);
  return logits;
}

// Each position's largest |logit - reference| within `share` of its largest |reference logit|;
// returns the largest such share.
float expect_within_share(const std::vector<float>& logits, const std::vector<float>& reference,
                          size_t positions, int vocab, float share, const std::string& what) {
  float worst = 0.0f;
  for (size_t t = 0; t < positions; ++t) {
    const float* g = logits.data() + t * vocab;
    const float* r = reference.data() + t * vocab;
    float max_ref = 0.0f, diff = 0.0f;
    for (int i = 0; i < vocab; ++i) {
      max_ref = std::max(max_ref, std::fabs(r[i]));
      diff = test::nan_max(diff, std::fabs(g[i] - r[i]));
    }
    worst = std::max(worst, diff / max_ref);
    EXPECT_LE(diff, share * max_ref) << what << ", position " << t;
  }
  return worst;
}

// The CPU's fp32 logits of the model's weights widened to f32: the reference.
std::vector<float> cpu_prefill_logits(const Model& model, const std::vector<int32_t>& tokens) {
  const auto widened = test::widened_to_f32(model);
  CpuBackend cpu(*widened, CpuBackendOptions{.num_threads = 2});
  return prefill_logits(cpu, tokens);
}

// The bytes of every tensor of the model as its file stores them.
size_t file_tensor_bytes(const ModelWeights& w, int* num_tensors) {
  size_t bytes = 0;
  *num_tensors = 0;
  const auto add = [&](const WeightTensor& t) {
    if (t.empty()) return;
    bytes += t.num_bytes;
    ++*num_tensors;
  };
  add(w.token_embedding);
  if (w.lm_head.data != w.token_embedding.data) add(w.lm_head);
  add(w.final_norm);
  for (const LayerWeights& l : w.layers) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role)) add(l[role]);
    }
  }
  return bytes;
}

// Expects the GPU's logits within 1e-3 + 1e-3 |cpu| of the CPU's at every one of `positions`
// positions (a NaN is outside).
void expect_close_logits(const std::vector<float>& gpu_logits, const std::vector<float>& cpu_logits,
                         size_t positions, int vocab, const std::string& label) {
  int num_outside = 0;
  float max_diff = 0.0f;
  for (size_t i = 0; i < positions * static_cast<size_t>(vocab); ++i) {
    const float diff = std::fabs(gpu_logits[i] - cpu_logits[i]);
    max_diff = test::nan_max(max_diff, diff);
    if (!(diff <= 1e-3f + 1e-3f * std::fabs(cpu_logits[i]))) ++num_outside;  // NaN too
  }
  EXPECT_EQ(num_outside, 0) << label << ": max |diff| " << max_diff << " over " << positions
                            << " positions x " << vocab;
}

class CudaQuantizedGguf : public ::testing::TestWithParam<std::string> {};

TEST_P(CudaQuantizedGguf, FromItsBlocksAgreesWithCpuAndTakesTheFilesBytes) {
  SLUICE_REQUIRE_CUDA();
  const std::string type = GetParam();
  const auto model = load_model(test::shared_path(kLlamaQ + "gguf/llama-q-" + type + ".gguf"));
  const int vocab = model->config.vocab_size;
  const std::vector<int32_t> tokens = fixture_tokens(type);
  ASSERT_GT(tokens.size(), 16u) << "the full sequence must take the tile kernel";
  const std::vector<float> cpu_logits = cpu_prefill_logits(*model, tokens);
  const CudaBackendOptions fp32{.activation_dtype = ActivationDType::F32};
  CudaBackend gpu(*model, fp32);
  const std::string type_note = type == "Q4_K_M" ? "Q4_K" : type;
  EXPECT_NE(gpu.describe().find(type_note + " weights kept in their blocks"), std::string::npos)
      << gpu.describe();
  EXPECT_EQ(gpu.describe().find("dequantized"), std::string::npos) << gpu.describe();

  // The weights take the file's bytes: each tensor where it lies, 256-byte aligned, plus the fp32
  // RoPE table; exactly what the layout (and so the model panel's plan) says.
  int num_tensors = 0;
  const size_t file_bytes = file_tensor_bytes(model->weights, &num_tensors);
  const size_t weight_bytes = gpu.memory().weight_bytes;
  EXPECT_EQ(weight_bytes, cuda_weight_bytes(model->weights, model->config, sizeof(float)));
  EXPECT_GE(weight_bytes, file_bytes);
  EXPECT_LE(weight_bytes, file_bytes + 256 * static_cast<size_t>(num_tensors + 1) +
                              static_cast<size_t>(model->config.rope_dims()) * 2)
      << "the file's tensors take " << file_bytes << " bytes";

  // Products from the blocks in fp32 against the CPU on the widened weights: the tile kernel over
  // the whole sequence, then the GEMV over its first 12 tokens (causal attention: the same rows).
  const auto check = [&](const std::vector<float>& gpu_logits, size_t positions, const char* path) {
    expect_close_logits(gpu_logits, cpu_logits, positions, vocab, type + " " + path);
  };
  check(prefill_logits(gpu, tokens), tokens.size(), "tile kernel");
  const std::vector<int32_t> head(tokens.begin(), tokens.begin() + 12);
  CudaBackend gemv_gpu(*model, fp32);
  check(prefill_logits(gemv_gpu, head), head.size(), "GEMV");

  // The way counts past the direct kernels' measured range go: each run widened a chunk of rows
  // at a time into scratch and multiplied by cuBLAS into its columns of the output. Every count
  // that way here, with a scratch of 7 of the widest rows, so each matrix takes several chunks
  // and most a short last one.
  CudaBackendOptions widened = fp32;
  widened.quant_direct_max_tokens = 0;
  widened.quant_scratch_max_bytes =
      7 *
      static_cast<size_t>(std::max(model->config.hidden_size, model->config.intermediate_size)) *
      sizeof(float);
  CudaBackend widened_gpu(*model, widened);
  EXPECT_NE(widened_gpu.describe().find("chunks widened for cuBLAS"), std::string::npos)
      << widened_gpu.describe();
  check(prefill_logits(widened_gpu, tokens), tokens.size(), "chunks widened for cuBLAS");
}

INSTANTIATE_TEST_SUITE_P(EveryBlockType, CudaQuantizedGguf,
                         ::testing::Values("Q8_0", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q2_K", "Q3_K",
                                           "Q4_K", "Q5_K", "Q6_K", "Q4_K_M"),
                         [](const auto& param_info) { return param_info.param; });

// MXFP4, which no llama-q file holds (llama.cpp writes it for gpt-oss's experts only): a dummy
// Llama with every matrix in MXFP4 blocks (random nibbles, power-of-two scales), through both
// product kernels and the embedding lookup from blocks, against the CPU on the widened weights.
TEST(CudaQuantizedDummy, Mxfp4FromItsBlocksAgreesWithCpu) {
  SLUICE_REQUIRE_CUDA();
  const auto model = make_dummy_model("tiny-llama", DType::MXFP4, /*seed=*/11);
  const int vocab = model->config.vocab_size;
  std::vector<int32_t> tokens(40);
  for (size_t i = 0; i < tokens.size(); ++i)
    tokens[i] = static_cast<int32_t>((i * 37 + 5) % static_cast<size_t>(vocab));
  const std::vector<float> cpu_logits = cpu_prefill_logits(*model, tokens);
  const CudaBackendOptions fp32{.activation_dtype = ActivationDType::F32};
  CudaBackend gpu(*model, fp32);
  EXPECT_NE(gpu.describe().find("MXFP4 weights kept in their blocks"), std::string::npos)
      << gpu.describe();
  expect_close_logits(prefill_logits(gpu, tokens), cpu_logits, tokens.size(), vocab,
                      "MXFP4 tile kernel");
  const std::vector<int32_t> head(tokens.begin(), tokens.begin() + 12);
  CudaBackend gemv_gpu(*model, fp32);
  expect_close_logits(prefill_logits(gemv_gpu, head), cpu_logits, head.size(), vocab, "MXFP4 GEMV");
}

// bf16 activations: the tile kernel multiplies on the tensor cores (WMMA; the emulator's stand-in
// on the CPU), the GEMV in fp32 FMAs. Against the CPU's fp32 logits on the widened weights, within
// the bf16 bound of llama-q in cuda_tiny_arch_test.cpp (4% of the row's largest |logit|: here the
// tile kernel also rounds each weight to bf16, as the dequantize-at-load path did).
TEST(CudaQuantizedGgufBf16, TensorCoreTilesAndGemvFollowTheCpu) {
  SLUICE_REQUIRE_CUDA();
  for (const std::string type : {"Q4_K_M", "Q8_0"}) {
    const auto model = load_model(test::shared_path(kLlamaQ + "gguf/llama-q-" + type + ".gguf"));
    const int vocab = model->config.vocab_size;
    const std::vector<int32_t> tokens = fixture_tokens(type);
    const std::vector<float> cpu_logits = cpu_prefill_logits(*model, tokens);
    const CudaBackendOptions bf16{.activation_dtype = ActivationDType::BF16};
    // The whole sequence (the tiles), 12 tokens (the GEMV), and 12 with the tiles taking every
    // count (quant_tiles_min_tokens, what the load-time choice picks where they win).
    CudaBackendOptions tiles_only = bf16;
    tiles_only.quant_tiles_min_tokens = 1;
    for (const auto& [positions, options] :
         {std::pair{tokens.size(), bf16}, std::pair{size_t{12}, bf16},
          std::pair{size_t{12}, tiles_only}}) {
      CudaBackend gpu(*model, options);
      const bool tiles_asked = options.quant_tiles_min_tokens.has_value();
      if (tiles_asked) {
        EXPECT_NE(gpu.describe().find("tiles from 1 tokens (asked for)"), std::string::npos)
            << gpu.describe();
      }
      const std::vector<int32_t> prefix(tokens.begin(), tokens.begin() + positions);
      const std::vector<float> gpu_logits = prefill_logits(gpu, prefix);
      // No product takes the integer GEMV, so no norm quantizes for it; 12 tokens with the GEMV do.
      EXPECT_EQ(gpu.step_counters().num_fused_norm_quantizes == 0, tiles_asked || positions > 16)
          << type << ", " << positions << " tokens";
      const float worst = expect_within_share(gpu_logits, cpu_logits, positions, vocab, 0.04f,
                                              type + ", " + std::to_string(positions) + " tokens");
      std::cout << "[ measured ] " << type << " bf16, " << positions
                << (tiles_asked ? " tokens, tiles only" : " tokens")
                << ": max |logit - cpu fp32| / max |logit| = " << worst << "\n";
    }
  }
}

// The integer tiles (kernels/quant_mmq.cuh, asked for: the emulator measures nothing): the whole
// sequence against the CPU's fp32 logits on the widened weights, and the
// same sequence through a quantized-activation buffer of 16 tokens (three chunks and a short
// fourth, each run quantizing its own) gives the same bits, with K whole or split in parts whose
// partial sums a second launch adds. The bound is twice the one above:
// every product's input is rounded to 8 bits a value (about 0.4% of its block's largest), and on
// this random-weight model a bf16 rounding that the two integer kernels' different fp32 sums
// (within 1e-5 of the exact product each, quant_mmq_test.cpp) put on either side of a boundary
// moves later positions' logits by up to 2% of the largest. Measured in the emulator: 5-6% at
// the worst positions, the integer GEMV 2-4% on the first 12.
TEST(CudaQuantizedGgufBf16, IntegerTilesFollowTheCpuInChunksOrNot) {
  SLUICE_REQUIRE_CUDA();
  for (const std::string type : {"Q4_K_M", "Q8_0"}) {
    SCOPED_TRACE(type);
    const auto model = load_model(test::shared_path(kLlamaQ + "gguf/llama-q-" + type + ".gguf"));
    const int vocab = model->config.vocab_size;
    const std::vector<int32_t> tokens = fixture_tokens(type);
    ASSERT_GT(tokens.size(), 48u) << "three chunks of 16 and a short fourth";
    const std::vector<float> cpu_logits = cpu_prefill_logits(*model, tokens);
    // K whole (the emulator's one SM asks for no split), and in 2 parts (the down product's 512
    // values; 3 asked for, one slice a part at most).
    for (const std::optional<int> parts : {std::optional<int>{}, std::optional<int>{3}}) {
      SCOPED_TRACE(parts ? "K in parts" : "K whole");
      CudaBackendOptions mmq{.activation_dtype = ActivationDType::BF16};
      mmq.quant_mmq = true;
      mmq.quant_mmq_parts = parts;
      CudaBackend gpu(*model, mmq);
      EXPECT_NE(gpu.describe().find("integer tiles (asked for)"), std::string::npos)
          << gpu.describe();
      const std::vector<float> whole = prefill_logits(gpu, tokens);
      const float worst =
          expect_within_share(whole, cpu_logits, tokens.size(), vocab, 0.08f, "integer tiles");
      std::cout << "[ measured ] " << type << " bf16, integer tiles"
                << (parts ? ", K in parts" : "") << ", " << tokens.size()
                << " tokens: max |logit - cpu fp32| / max |logit| = " << worst << "\n";
      CudaBackendOptions chunked = mmq;
      chunked.quant_mmq_chunk_tokens = 16;
      CudaBackend chunked_gpu(*model, chunked);
      const std::vector<float> in_chunks = prefill_logits(chunked_gpu, tokens);
      ASSERT_EQ(in_chunks.size(), whole.size());
      EXPECT_EQ(test::count_different_bits(in_chunks.data(), whole.data(), whole.size()), 0u);
    }
  }
}

// A norm that quantizes its output for the integer GEMV, and a gated activation that does the same
// for the down product (fused_norm_quantize), give the bits of the products quantizing it
// themselves: a prefill within the GEMV's range, then decode steps
// (graphs on a GPU), bf16 and fp16, for the norms before attention and before the FFN.
TEST(CudaQuantizedGgufBf16, NormsThatQuantizeTheirOutputGiveTheSameBits) {
  SLUICE_REQUIRE_CUDA();
  for (const std::string type : {"Q4_K_M", "Q8_0"}) {
    const auto model = load_model(test::shared_path(kLlamaQ + "gguf/llama-q-" + type + ".gguf"));
    const std::vector<int32_t> tokens = fixture_tokens(type);
    for (const ActivationDType dtype : {ActivationDType::BF16, ActivationDType::F16}) {
      std::vector<float> logits[2];
      int64_t fused[2] = {}, fused_activations[2] = {};
      for (const bool fuse : {false, true}) {
        CudaBackend gpu(*model, CudaBackendOptions{.activation_dtype = dtype,
                                                   .quant_direct_max_tokens = 16,
                                                   .fused_norm_quantize = fuse});
        constexpr int kBlocks = 8;
        gpu.allocate_kv_cache(kBlocks, 16);
        const std::vector<int32_t> prompt(tokens.begin(), tokens.begin() + 5);
        std::vector<float> step;
        gpu.forward(test::single_request_batch(prompt, 0, kBlocks, true), step);
        logits[fuse] = step;
        for (int t = 5; t < 9; ++t) {
          gpu.forward(
              test::single_request_batch({tokens[static_cast<size_t>(t)]}, t, kBlocks, false),
              step);
          logits[fuse].insert(logits[fuse].end(), step.begin(), step.end());
        }
        fused[fuse] = gpu.step_counters().num_fused_norm_quantizes;
        fused_activations[fuse] = gpu.step_counters().num_fused_activation_quantizes;
      }
      SCOPED_TRACE(type + (dtype == ActivationDType::BF16 ? ", bf16" : ", fp16"));
      EXPECT_EQ(fused[0], 0);
      EXPECT_GE(fused[1], 2 * model->config.num_layers) << "every layer's two norms, each step";
      EXPECT_EQ(fused_activations[0], 0);
      EXPECT_GE(fused_activations[1], model->config.num_layers) << "every layer's activation";
      ASSERT_EQ(logits[0].size(), logits[1].size());
      EXPECT_EQ(test::count_different_bits(logits[0].data(), logits[1].data(), logits[0].size()),
                0u)
          << "of " << logits[0].size() << " logits";
    }
  }
}

}  // namespace
}  // namespace sluice
