#include "engine/model/dummy_model.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <new>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/core/quant_blocks.h"
#include "engine/core/system_memory.h"
#include "engine/model/architecture.h"
#include "engine/model/weight_roles.h"

namespace sluice {

namespace {

using ScalingType = RopeScaling::Type;

// A published shape and the options of its architecture, as its config.json states them.
struct Preset {
  const char* name;
  const char* architecture;  // a row of the architecture table
  int hidden = 0, ffn = 0, layers = 0, heads = 0, kv_heads = 0;
  int head_dim = 0;  // 0: hidden / heads
  int vocab = 0, context = 0;
  float rope_theta = 10000.0f;
  float rms_norm_eps = 1e-5f;
  bool qkv_bias = false, tied = false;
  int sliding_window = 0;         // 0: none
  int window_period = 0;          // Gemma 3's sliding_window_pattern
  float local_rope_theta = 0.0f;  // Gemma 3's rope_local_base_freq
  float attn_softcap = 0.0f, final_softcap = 0.0f;
  int rotary_percent = 0;  // partial_rotary_factor in percent; 0: every dimension
  ScalingType rope_scaling = ScalingType::None;
  float rope_scaling_factor = 1.0f;  // llama3 keeps RopeScaling's defaults (1, 4, 8192)
  int rope_original_context = 0;     // YaRN's original_max_position_embeddings
  // Mixture of experts (0 experts: a dense FFN of `ffn`): every layer routes each token to
  // experts_used of `experts` FFNs of expert_ffn.
  int experts = 0, experts_used = 0, expert_ffn = 0;
  // Hybrids (Qwen3.5): Gated DeltaNet layers of linear_k_heads / linear_v_heads heads of
  // linear_k_dim / linear_v_dim, every full_attention_interval-th layer attention; 0: none.
  int linear_k_heads = 0, linear_v_heads = 0, linear_k_dim = 0, linear_v_dim = 0;
  int full_attention_interval = 0;
  bool is_test_shape = false;  // small, for tests; not listed
};

// The numbers come from each model's config.json on the Hugging Face hub (TinyLlama-1.1B-Chat-
// v1.0, Qwen/Qwen3-8B, google/gemma-2-9b, google/gemma-3-12b-it's text_config,
// microsoft/Phi-3-mini-4k-instruct, mistralai/Mistral-Nemo-Base-2407, meta-llama/Llama-3.1-8B,
// Qwen/Qwen3-30B-A3B, openai/gpt-oss-20b, mistralai/Mixtral-8x7B-v0.1).
// The tiny shapes give every architecture's options on rows of whole 256-value blocks.
// clang-format off
constexpr Preset kPresets[] = {
    {.name = "stories15M", .architecture = "llama", .hidden = 288, .ffn = 768, .layers = 6,
     .heads = 6, .kv_heads = 6, .vocab = 32000, .context = 256, .tied = true},
    {.name = "stories110M", .architecture = "llama", .hidden = 768, .ffn = 2048, .layers = 12,
     .heads = 12, .kv_heads = 12, .vocab = 32000, .context = 1024, .tied = true},
    {.name = "tinyllama-1.1b", .architecture = "llama", .hidden = 2048, .ffn = 5632,
     .layers = 22, .heads = 32, .kv_heads = 4, .vocab = 32000, .context = 2048},
    {.name = "llama-3.2-1b", .architecture = "llama", .hidden = 2048, .ffn = 8192, .layers = 16,
     .heads = 32, .kv_heads = 8, .vocab = 128256, .context = 131072, .rope_theta = 500000.0f,
     .tied = true},
    {.name = "qwen2.5-1.5b", .architecture = "qwen2", .hidden = 1536, .ffn = 8960, .layers = 28,
     .heads = 12, .kv_heads = 2, .vocab = 151936, .context = 32768, .rope_theta = 1000000.0f,
     .qkv_bias = true, .tied = true},
    {.name = "llama-2-7b", .architecture = "llama", .hidden = 4096, .ffn = 11008, .layers = 32,
     .heads = 32, .kv_heads = 32, .vocab = 32000, .context = 4096},
    {.name = "mistral-7b", .architecture = "llama", .hidden = 4096, .ffn = 14336, .layers = 32,
     .heads = 32, .kv_heads = 8, .vocab = 32000, .context = 32768, .rope_theta = 1000000.0f},
    {.name = "qwen2.5-7b", .architecture = "qwen2", .hidden = 3584, .ffn = 18944, .layers = 28,
     .heads = 28, .kv_heads = 4, .vocab = 152064, .context = 32768, .rope_theta = 1000000.0f,
     .qkv_bias = true},
    {.name = "llama-3-8b", .architecture = "llama", .hidden = 4096, .ffn = 14336, .layers = 32,
     .heads = 32, .kv_heads = 8, .vocab = 128256, .context = 8192, .rope_theta = 500000.0f},
    {.name = "llama-3.1-8b", .architecture = "llama", .hidden = 4096, .ffn = 14336,
     .layers = 32, .heads = 32, .kv_heads = 8, .vocab = 128256, .context = 131072,
     .rope_theta = 500000.0f, .rope_scaling = ScalingType::Llama3, .rope_scaling_factor = 8.0f},
    {.name = "qwen3-8b", .architecture = "qwen3", .hidden = 4096, .ffn = 12288, .layers = 36,
     .heads = 32, .kv_heads = 8, .head_dim = 128, .vocab = 151936, .context = 40960,
     .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f},
    {.name = "gemma-2-9b", .architecture = "gemma2", .hidden = 3584, .ffn = 14336, .layers = 42,
     .heads = 16, .kv_heads = 8, .head_dim = 256, .vocab = 256000, .context = 8192,
     .rms_norm_eps = 1e-6f, .tied = true, .sliding_window = 4096, .attn_softcap = 50.0f,
     .final_softcap = 30.0f},
    {.name = "gemma-3-12b", .architecture = "gemma3", .hidden = 3840, .ffn = 15360,
     .layers = 48, .heads = 16, .kv_heads = 8, .head_dim = 256, .vocab = 262208,
     .context = 131072, .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f, .tied = true,
     .sliding_window = 1024, .window_period = 6, .local_rope_theta = 10000.0f,
     .rope_scaling = ScalingType::Linear, .rope_scaling_factor = 8.0f},
    // config.json names a sliding window of 2047, which neither llama.cpp nor Sluice applies.
    {.name = "phi-3-mini", .architecture = "phi3", .hidden = 3072, .ffn = 8192, .layers = 32,
     .heads = 32, .kv_heads = 32, .vocab = 32064, .context = 4096, .sliding_window = 2047},
    {.name = "mistral-nemo-12b", .architecture = "mistral", .hidden = 5120, .ffn = 14336,
     .layers = 40, .heads = 32, .kv_heads = 8, .head_dim = 128, .vocab = 131072,
     .context = 1024000, .rope_theta = 1000000.0f},
    // intermediate_size 6144 is the dense FFN width config.json names; every layer is sparse.
    {.name = "qwen3-30b-a3b", .architecture = "qwen3moe", .hidden = 2048, .ffn = 6144,
     .layers = 48, .heads = 32, .kv_heads = 4, .head_dim = 128, .vocab = 151936,
     .context = 40960, .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f, .experts = 128,
     .experts_used = 8, .expert_ffn = 768},
    // Sliding window 128 on the even layers (the architecture's pattern). config.json's YaRN says
    // truncate: false; the preset rounds the ramp as llama.cpp always does (RopeScaling's default),
    // so its GGUF file is the same model to both. Expert rows of 2880 take 32-value blocks only.
    {.name = "gpt-oss-20b", .architecture = "gpt-oss", .hidden = 2880, .ffn = 2880,
     .layers = 24, .heads = 64, .kv_heads = 8, .head_dim = 64, .vocab = 201088,
     .context = 131072, .rope_theta = 150000.0f, .qkv_bias = true, .sliding_window = 128,
     .rope_scaling = ScalingType::Yarn, .rope_scaling_factor = 32.0f,
     .rope_original_context = 4096, .experts = 32, .experts_used = 4, .expert_ffn = 2880},
    {.name = "mixtral-8x7b", .architecture = "mixtral", .hidden = 4096, .ffn = 14336,
     .layers = 32, .heads = 32, .kv_heads = 8, .vocab = 32000, .context = 32768,
     .rope_theta = 1000000.0f, .experts = 8, .experts_used = 2, .expert_ffn = 14336},

    // Qwen3.5-9B's text model (config.json's text_config; llama.cpp's qwen35 GGUF keys): 8 of 32
    // layers attend (head_dim 256, a quarter rotary, gated output), 24 are Gated DeltaNet layers
    // of 16 key and 32 value heads of 128.
    {.name = "qwen3.5-9b", .architecture = "qwen35", .hidden = 4096, .ffn = 12288, .layers = 32,
     .heads = 16, .kv_heads = 4, .head_dim = 256, .vocab = 248320, .context = 262144,
     .rope_theta = 10000000.0f, .rms_norm_eps = 1e-6f, .rotary_percent = 25,
     .linear_k_heads = 16, .linear_v_heads = 32, .linear_k_dim = 128, .linear_v_dim = 128,
     .full_attention_interval = 4},

    {.name = "tiny-qwen35", .architecture = "qwen35", .hidden = 256, .ffn = 512, .layers = 4,
     .heads = 4, .kv_heads = 2, .head_dim = 64, .vocab = 512, .context = 256,
     .rope_theta = 10000000.0f, .rms_norm_eps = 1e-6f, .rotary_percent = 25,
     .linear_k_heads = 2, .linear_v_heads = 4, .linear_k_dim = 64, .linear_v_dim = 64,
     .full_attention_interval = 4, .is_test_shape = true},
    {.name = "tiny-llama", .architecture = "llama", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .vocab = 512, .context = 256, .is_test_shape = true},
    {.name = "tiny-llama3", .architecture = "llama", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .vocab = 512, .context = 256, .rope_theta = 500000.0f,
     .rope_scaling = ScalingType::Llama3, .rope_scaling_factor = 8.0f, .is_test_shape = true},
    {.name = "tiny-mistral", .architecture = "mistral", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .head_dim = 128, .vocab = 512, .context = 256,
     .is_test_shape = true},
    {.name = "tiny-qwen2", .architecture = "qwen2", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .vocab = 512, .context = 256, .rope_theta = 1000000.0f,
     .rms_norm_eps = 1e-6f, .qkv_bias = true, .tied = true, .is_test_shape = true},
    {.name = "tiny-qwen3", .architecture = "qwen3", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 1, .head_dim = 128, .vocab = 512, .context = 256,
     .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f, .is_test_shape = true},
    {.name = "tiny-gemma2", .architecture = "gemma2", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .head_dim = 128, .vocab = 512, .context = 256,
     .rms_norm_eps = 1e-6f, .tied = true, .sliding_window = 4, .attn_softcap = 50.0f,
     .final_softcap = 30.0f, .is_test_shape = true},
    {.name = "tiny-gemma3", .architecture = "gemma3", .hidden = 256, .ffn = 512, .layers = 6,
     .heads = 4, .kv_heads = 1, .head_dim = 64, .vocab = 512, .context = 256,
     .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f, .tied = true, .sliding_window = 4,
     .window_period = 6, .local_rope_theta = 10000.0f, .rope_scaling = ScalingType::Linear,
     .rope_scaling_factor = 8.0f, .is_test_shape = true},
    {.name = "tiny-phi3", .architecture = "phi3", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .vocab = 512, .context = 256, .rotary_percent = 50,
     .is_test_shape = true},
    {.name = "tiny-qwen3moe", .architecture = "qwen3moe", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .head_dim = 128, .vocab = 512, .context = 256,
     .rope_theta = 1000000.0f, .rms_norm_eps = 1e-6f, .experts = 4, .experts_used = 2,
     .expert_ffn = 256, .is_test_shape = true},
    // llama.cpp sizes a Mixtral's experts by feed_forward_length: expert_ffn = ffn.
    {.name = "tiny-mixtral", .architecture = "mixtral", .hidden = 256, .ffn = 512, .layers = 2,
     .heads = 4, .kv_heads = 2, .vocab = 512, .context = 256, .rope_theta = 1000000.0f,
     .experts = 4, .experts_used = 2, .expert_ffn = 512, .is_test_shape = true},
    {.name = "tiny-gpt-oss", .architecture = "gpt-oss", .hidden = 256, .ffn = 256, .layers = 2,
     .heads = 4, .kv_heads = 2, .head_dim = 64, .vocab = 512, .context = 256,
     .rope_theta = 150000.0f, .qkv_bias = true, .sliding_window = 4,
     .rope_scaling = ScalingType::Yarn, .rope_scaling_factor = 4.0f, .rope_original_context = 64,
     .experts = 4, .experts_used = 2, .expert_ffn = 256, .is_test_shape = true},
};
// clang-format on

const Preset& find_preset(const std::string& name) {
  for (const auto& p : kPresets) {
    if (name == p.name) return p;
  }
  std::string names;
  for (const auto& n : dummy_model_presets()) names += (names.empty() ? "" : ", ") + n;
  fail("unknown dummy model '", name, "' (known: ", names, ")");
}

ModelConfig config_of(const Preset& p, int num_layers) {
  ModelConfig c;
  c.architecture = p.architecture;
  c.hidden_size = p.hidden;
  c.intermediate_size = p.ffn;
  c.num_layers = num_layers > 0 ? num_layers : p.layers;
  c.num_heads = p.heads;
  c.num_kv_heads = p.kv_heads;
  c.head_dim = p.head_dim > 0 ? p.head_dim : p.hidden / p.heads;
  c.vocab_size = p.vocab;
  c.max_position_embeddings = p.context;
  c.rms_norm_eps = p.rms_norm_eps;
  c.rope_theta = p.rope_theta;
  c.rope_layout = RopeLayout::RotateHalf;
  c.rope_scaling.type = p.rope_scaling;
  c.rope_scaling.factor = p.rope_scaling_factor;
  c.tie_word_embeddings = p.tied;
  c.has_qkv_bias = p.qkv_bias;
  c.sliding_window = p.sliding_window;
  c.attn_logit_softcap = p.attn_softcap;
  c.final_logit_softcap = p.final_softcap;
  if (p.rotary_percent > 0) c.rotary_dim = c.head_dim * p.rotary_percent / 100;
  if (p.rope_scaling == ScalingType::Yarn) {  // the readers' defaults (beta_fast 32, beta_slow 1)
    c.rope_scaling.original_max_position_embeddings = p.rope_original_context;
    c.rope_scaling.attention_factor = 1.0f + 0.1f * std::log(p.rope_scaling_factor);
  }
  c.num_experts = p.experts;
  c.num_experts_used = p.experts_used;
  c.expert_intermediate_size = p.expert_ffn;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  if (p.linear_v_heads > 0) {  // GGUF's layout: tiled value heads, norms stored as used
    c.deltanet = DeltaNetConfig{.num_k_heads = p.linear_k_heads,
                                .num_v_heads = p.linear_v_heads,
                                .k_head_dim = p.linear_k_dim,
                                .v_head_dim = p.linear_v_dim,
                                .conv_kernel = 4};
    c.attn_output_gate = true;
  }
  apply_architecture(architecture_of(c), c, p.window_period, p.local_rope_theta);
  for (int l = 0; p.full_attention_interval > 0 && l < c.num_layers; ++l) {
    c.layers[static_cast<size_t>(l)].kind =
        (l + 1) % p.full_attention_interval == 0 ? LayerKind::Attention : LayerKind::DeltaNet;
  }
  return c;
}

// Calls f(role, layer) for every tensor the in-memory model holds, in a fixed order. The parts of
// a fused tensor are made directly: the files' fusion is a layout the loader undoes.
void for_each_weight(const ModelConfig& c, const std::function<void(WeightRole, int)>& f) {
  Architecture unfused = architecture_of(c);
  unfused.fused_qkv = false;
  unfused.fused_gate_up = false;
  f(WeightRole::TokenEmbedding, 0);
  for (int l = 0; l < c.num_layers; ++l) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role) && weight_role_in_files(role, unfused, c, l)) f(role, l);
    }
  }
  f(WeightRole::FinalNorm, 0);
  if (weight_role_in_files(WeightRole::LmHead, unfused, c)) f(WeightRole::LmHead, 0);
}

// Matrices and expert stacks take the requested type; the router stays F32 as llama.cpp's
// converter keeps ffn_gate_inp, and so do norms, biases and sinks.
DType stored_dtype(WeightRole role, DType matrix_dtype) {
  const WeightKind kind = weight_kind(role);
  if (kind == WeightKind::ExpertMatrices) return matrix_dtype;
  return kind == WeightKind::Matrix && role != WeightRole::Router ? matrix_dtype : DType::F32;
}

// splitmix64: a counter-based generator, so any element can be drawn independently.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Float weights are uniform in [-0.035, 0.035]; quantized ones are scaled to the same standard
// deviation.
constexpr float kWidth = 0.07f;
const double kStd = 0.035 / std::sqrt(3.0);

// A block of a quantized type is valid whatever its bits are, so random blocks are random bytes
// with sane fp16 scales: d is set so that the values have the float presets' standard deviation,
// and the min (dmin, or Q4_1/Q5_1's m) to min_per_d * d, which centres them. With every other
// bit uniform, a value's mean square is mean_square * d^2 by the type's formula (quant_blocks.h;
// sc, m: sub-block scale and min, q: the quant):
constexpr int kNoMin = -1;
struct RandomBlockRecipe {
  DType dtype;
  size_t d_offset;
  int min_offset;  // kNoMin: the type has none
  double min_per_d;
  double mean_square;
};

constexpr RandomBlockRecipe kRecipes[] = {
    // q in [-127, 127] (-128, which ggml's quantizer never writes, becomes -127)
    {DType::Q8_0, offsetof(quant::BlockQ8_0, d), kNoMin, 0.0, 5460.5},
    // q - 8 and q - 16, q of 4 and 5 bits
    {DType::Q4_0, offsetof(quant::BlockQ4_0, d), kNoMin, 0.0, 21.5},
    {DType::Q5_0, offsetof(quant::BlockQ5_0, d), kNoMin, 0.0, 85.5},
    // q + m / d with m = -7.5 d and -15.5 d
    {DType::Q4_1, offsetof(quant::BlockQ4_1, d), offsetof(quant::BlockQ4_1, m), -7.5, 21.25},
    {DType::Q5_1, offsetof(quant::BlockQ5_1, d), offsetof(quant::BlockQ5_1, m), -15.5, 85.25},
    // sc q - 1.5 m: 4-bit sc and m, 2-bit q
    {DType::Q2_K, offsetof(quant::BlockQ2_K, d), offsetof(quant::BlockQ2_K, dmin), 1.5, 192.5},
    // (sc - 32) q: 6-bit sc, q in [-4, 3]
    {DType::Q3_K, offsetof(quant::BlockQ3_K, d), kNoMin, 0.0, 1878.25},
    // sc q - 7.5 m and sc q - 15.5 m: 6-bit sc and m, 4- and 5-bit q
    {DType::Q4_K, offsetof(quant::BlockQ4_K, d), offsetof(quant::BlockQ4_K, dmin), 7.5, 66727.5},
    {DType::Q5_K, offsetof(quant::BlockQ5_K, d), offsetof(quant::BlockQ5_K, dmin), 15.5, 277651.5},
    // sc (q - 32): int8 sc, 6-bit q
    {DType::Q6_K, offsetof(quant::BlockQ6_K, d), kNoMin, 0.0, 1865102.25},
    // the doubled FP4 values (mean square 274 / 8); d is a power of two (an E8M0 byte)
    {DType::MXFP4, offsetof(quant::BlockMXFP4, e), kNoMin, 0.0, 34.25},
};

const RandomBlockRecipe& recipe_of(DType dtype) {
  for (const auto& r : kRecipes) {
    if (r.dtype == dtype) return r;
  }
  fail("dummy model: no random ", dtype_name(dtype), " blocks");
}

// Fills blocks [begin, end) of a tensor of recipe's type; block b's bytes come from the counters
// after b * words_per_block, so any range fills alone with the same result.
void fill_random_blocks(const RandomBlockRecipe& recipe, uint8_t* data, int64_t begin, int64_t end,
                        uint64_t stream) {
  const size_t block_bytes = dtype_traits(recipe.dtype).block_bytes;
  const size_t words_per_block = (block_bytes + 7) / 8;
  const double d = kStd / std::sqrt(recipe.mean_square);
  const uint16_t d_bits = f32_to_f16(static_cast<float>(d));
  // MXFP4's scale 2^(e - 128): the power of two nearest d.
  const auto e8m0_bits = static_cast<uint8_t>(128 + std::lround(std::log2(d)));
  const uint16_t min_bits = f32_to_f16(static_cast<float>(recipe.min_per_d * d));
  for (int64_t b = begin; b < end; ++b) {
    uint8_t* block = data + static_cast<size_t>(b) * block_bytes;
    for (size_t w = 0; w < words_per_block; ++w) {
      const uint64_t bits = mix(stream + static_cast<uint64_t>(b) * words_per_block + w);
      std::memcpy(block + 8 * w, &bits, std::min<size_t>(8, block_bytes - 8 * w));
    }
    if (recipe.dtype == DType::MXFP4) {
      block[recipe.d_offset] = e8m0_bits;
    } else {
      std::memcpy(block + recipe.d_offset, &d_bits, sizeof d_bits);
    }
    if (recipe.min_offset != kNoMin) std::memcpy(block + recipe.min_offset, &min_bits, 2);
    if (recipe.dtype == DType::Q8_0) {
      for (size_t i = sizeof(uint16_t); i < block_bytes; ++i) {
        if (block[i] == 0x80) block[i] = 0x81;
      }
    }
  }
}

// Elements [begin, end) of a float tensor: uniform draws, or ones.
void fill_floats(DType dtype, uint8_t* data, int64_t begin, int64_t end, uint64_t stream,
                 bool is_ones) {
  for (int64_t i = begin; i < end; ++i) {
    const float value =
        is_ones ? 1.0f
                : (static_cast<float>(mix(stream + static_cast<uint64_t>(i)) >> 40) / 16777216.0f -
                   0.5f) *
                      kWidth;
    switch (dtype) {
      case DType::F32:
        std::memcpy(data + 4 * i, &value, 4);
        break;
      case DType::F16: {
        const uint16_t h = f32_to_f16(value);
        std::memcpy(data + 2 * i, &h, 2);
        break;
      }
      case DType::BF16: {
        const uint16_t h = f32_to_bf16(value);
        std::memcpy(data + 2 * i, &h, 2);
        break;
      }
      default:
        return;  // quantized types fill by blocks
    }
  }
}

// Runs fill(begin, end) over [0, num_units) on the machine's cores (an 8B model is 8e9 draws:
// minutes on one core); every unit is drawn from its own counter, so the split does not matter.
void fill_in_parallel(int64_t num_units, int64_t num_elements,
                      const std::function<void(int64_t, int64_t)>& fill) {
  const int64_t threads = std::clamp<int64_t>(std::thread::hardware_concurrency(), 1,
                                              std::max<int64_t>(1, num_elements >> 20));
  std::vector<std::thread> workers;
  for (int64_t k = 1; k < threads; ++k)
    workers.emplace_back(fill, num_units * k / threads, num_units * (k + 1) / threads);
  fill(0, num_units / threads);
  for (auto& worker : workers) worker.join();
}

class WeightFactory {
 public:
  WeightFactory(Model& model, DType dtype, uint64_t seed)
      : model_(model), dtype_(dtype), seed_(seed) {}

  WeightTensor make(WeightRole role, const std::string& name, std::vector<int64_t> shape) {
    const bool is_ones = is_norm_role(role) || role == WeightRole::SsmNorm;
    WeightTensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = stored_dtype(role, dtype_);
    const int64_t n = t.num_elements();
    const size_t num_bytes = dtype_num_bytes(t.dtype, n);
    auto& storage = model_.owned_storage.emplace_back();
    try {
      storage.resize(num_bytes);
    } catch (const std::bad_alloc&) {
      fail("dummy model: cannot allocate ", num_bytes >> 20, " MiB for ", name);
    }
    const uint64_t stream = mix(seed_ ^ mix(std::hash<std::string>{}(name)));
    uint8_t* data = storage.data();
    if (dtype_traits(t.dtype).quantized) {
      const RandomBlockRecipe& recipe = recipe_of(t.dtype);
      fill_in_parallel(n / dtype_traits(t.dtype).block_elements, n,
                       [&](int64_t begin, int64_t end) {
                         fill_random_blocks(recipe, data, begin, end, stream);
                       });
    } else {
      const DType dtype = t.dtype;
      fill_in_parallel(n, n, [&](int64_t begin, int64_t end) {
        fill_floats(dtype, data, begin, end, stream, is_ones);
      });
    }
    if (role == WeightRole::SsmA) {  // a decay rate: negative (A_log = 0, a = -1)
      for (int64_t i = 0; i < n; ++i) {
        const float minus_one = -1.0f;
        std::memcpy(data + i * 4, &minus_one, 4);
      }
    }
    t.data = storage.data();
    t.num_bytes = storage.size();
    return t;
  }

 private:
  Model& model_;
  DType dtype_;
  uint64_t seed_;
};

// Refuses a type whose blocks do not tile every matrix row, and weights the machine cannot hold,
// before anything is allocated.
void check_dummy_model_fits(const std::string& preset, const ModelConfig& c, DType dtype) {
  const Architecture& arch = architecture_of(c);
  for_each_weight(c, [&](WeightRole role, int layer) {
    const std::vector<int64_t> shape = weight_shape(role, c);
    const DType stored = stored_dtype(role, dtype);
    if (dtype_row_is_valid(stored, shape.back())) return;
    fail("dummy model ", preset, ": ", dtype_name(dtype), " stores rows in blocks of ",
         dtype_traits(dtype).block_elements, " values, and tensor ",
         tensor_name(role, arch, NameScheme::Gguf, layer), " has rows of ", shape.back(),
         "; choose another --dummy-dtype or preset");
  });
  const size_t needed = dummy_model_weight_bytes(c, dtype);
  const size_t available = available_system_memory_bytes();
  if (available > 0 && needed > available) {
    fail("dummy model ", preset, ": its ", dtype_name(dtype), " weights need ", needed >> 20,
         " MiB and ", available >> 20, " MiB of memory is available",
         dtype == DType::F32 ? "; try --dummy-dtype bf16 or a smaller preset"
                             : "; try a smaller type or preset");
  }
}

}  // namespace

std::vector<std::string> dummy_model_presets() {
  std::vector<std::string> out;
  for (const auto& p : kPresets) {
    if (!p.is_test_shape) out.emplace_back(p.name);
  }
  return out;
}

ModelConfig dummy_model_config(const std::string& preset, int num_layers) {
  const ModelConfig c = config_of(find_preset(preset), num_layers);
  c.validate("dummy model " + preset);
  return c;
}

size_t dummy_model_weight_bytes(const ModelConfig& config, DType dtype) {
  size_t total = 0;
  for_each_weight(config, [&](WeightRole role, int) {
    const std::vector<int64_t> shape = weight_shape(role, config);
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;  // an expert stack: every expert
    total += dtype_num_bytes(stored_dtype(role, dtype), n);
  });
  return total;
}

std::unique_ptr<Model> make_dummy_model(const std::string& preset, DType dtype, uint64_t seed,
                                        int num_layers) {
  auto model = std::make_unique<Model>();
  model->path = "dummy:" + preset;
  model->format = ModelFormat::Dummy;
  model->config = dummy_model_config(preset, num_layers);
  const ModelConfig& c = model->config;
  check_dummy_model_fits(preset, c, dtype);
  const Architecture& arch = architecture_of(c);
  WeightFactory factory(*model, dtype, seed);
  ModelWeights& w = model->weights;
  w.layers.resize(static_cast<size_t>(c.num_layers));
  w.experts.resize(static_cast<size_t>(c.num_layers));
  for_each_weight(c, [&](WeightRole role, int layer) {
    WeightTensor t =
        factory.make(role, tensor_name(role, arch, NameScheme::Gguf, layer), weight_shape(role, c));
    if (is_expert_role(role)) {  // one stack in memory, a view per expert
      auto& experts = w.experts[static_cast<size_t>(layer)][role];
      for (int e = 0; e < c.num_experts; ++e) experts.push_back(expert_slice(t, e));
    } else if (is_layer_role(role)) {
      w.layers[static_cast<size_t>(layer)][role] = std::move(t);
    } else if (role == WeightRole::TokenEmbedding) {
      w.token_embedding = std::move(t);
    } else if (role == WeightRole::FinalNorm) {
      w.final_norm = std::move(t);
    } else {
      w.lm_head = std::move(t);
    }
  });
  if (c.tie_word_embeddings) w.lm_head = w.token_embedding;
  return model;
}

}  // namespace sluice
