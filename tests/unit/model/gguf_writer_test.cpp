// Dummy models written as GGUF: Sluice loads the file back as the same model (bit-identical CPU
// logits where the file keeps the model's RoPE pair order), the file has the keys, names and
// layout llama.cpp's converter gives the same architecture (compared with the converter's own
// files in ../shared/models/tiny-arch), and a failed write names the file and leaves none behind.
#include "engine/model/gguf_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <set>

#include "engine/backend/cpu/cpu_backend.h"
#include "engine/backend/rope.h"
#include "engine/core/error.h"
#include "engine/model/architecture.h"
#include "engine/model/dummy_model.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/float_compare.h"
#include "tests/support/single_request_batch.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string temp_file(const std::string& name) {
  return test::make_temp_dir("gguf-writer") + "/" + name;
}

// CPU logits at every position of a 12-token prompt (longer than the test shapes' windows).
std::vector<float> cpu_logits(const Model& model) {
  CpuBackend backend(model, CpuBackendOptions{.num_threads = 2});
  backend.allocate_kv_cache(1, 16);
  std::vector<int32_t> tokens;
  for (int i = 0; i < 12; ++i) tokens.push_back((37 * i + 5) % model.config.vocab_size);
  std::vector<float> logits;
  BatchInputs batch = test::single_request_batch(tokens, 0, 1, true);
  if (model.config.is_hybrid()) {  // Qwen3.5: one state slot
    backend.allocate_state_slots(1);
    batch.state_slots = {0};
  }
  backend.forward(batch, logits);
  return logits;
}

void expect_bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    uint32_t x, y;
    std::memcpy(&x, &a[i], 4);
    std::memcpy(&y, &b[i], 4);
    ASSERT_EQ(x, y) << "logit " << i << ": " << a[i] << " vs " << b[i];
  }
}

// The largest |a - b| relative to max(1, |a|).
double max_relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    worst = test::nan_max(worst, std::fabs(static_cast<double>(a[i]) - b[i]) /
                                     std::max(1.0, std::fabs(static_cast<double>(a[i]))));
  }
  return worst;
}

void expect_same_model_config(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.hidden_size, b.hidden_size);
  EXPECT_EQ(a.intermediate_size, b.intermediate_size);
  EXPECT_EQ(a.num_layers, b.num_layers);
  EXPECT_EQ(a.num_heads, b.num_heads);
  EXPECT_EQ(a.num_kv_heads, b.num_kv_heads);
  EXPECT_EQ(a.head_dim, b.head_dim);
  EXPECT_EQ(a.rope_dims(), b.rope_dims());
  EXPECT_EQ(a.vocab_size, b.vocab_size);
  EXPECT_EQ(a.max_position_embeddings, b.max_position_embeddings);
  EXPECT_EQ(a.rms_norm_eps, b.rms_norm_eps);
  EXPECT_EQ(a.rope_theta, b.rope_theta);
  EXPECT_EQ(a.tie_word_embeddings, b.tie_word_embeddings);
  EXPECT_EQ(a.has_qkv_bias, b.has_qkv_bias);
  EXPECT_EQ(a.activation, b.activation);
  EXPECT_EQ(a.qk_norm, b.qk_norm);
  EXPECT_EQ(a.post_norms, b.post_norms);
  EXPECT_EQ(a.embedding_scale, b.embedding_scale);
  EXPECT_EQ(a.effective_attention_scale(), b.effective_attention_scale());
  EXPECT_EQ(a.attn_logit_softcap, b.attn_logit_softcap);
  EXPECT_EQ(a.final_logit_softcap, b.final_logit_softcap);
  EXPECT_EQ(a.sliding_window, b.sliding_window);
  EXPECT_EQ(a.bos_token_id, b.bos_token_id);
  EXPECT_EQ(a.eos_token_id, b.eos_token_id);
  EXPECT_EQ(a.attn_output_gate, b.attn_output_gate);
  EXPECT_EQ(a.state_floats(), b.state_floats());
  EXPECT_EQ(a.deltanet.grouped_v_heads, b.deltanet.grouped_v_heads);
  EXPECT_EQ(a.shared_expert_intermediate_size, b.shared_expert_intermediate_size);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t l = 0; l < a.layers.size(); ++l) {
    EXPECT_EQ(a.layers[l].kind, b.layers[l].kind) << "layer " << l;
    EXPECT_EQ(a.layers[l].sliding_window, b.layers[l].sliding_window) << "layer " << l;
    EXPECT_EQ(a.layers[l].rope_theta, b.layers[l].rope_theta) << "layer " << l;
    EXPECT_EQ(a.layers[l].rope_scaling.type, b.layers[l].rope_scaling.type) << "layer " << l;
    EXPECT_EQ(a.layers[l].rope_scaling.factor, b.layers[l].rope_scaling.factor) << "layer " << l;
  }
}

std::unique_ptr<Model> write_and_load(const Model& model, const std::string& name) {
  const std::string path = temp_file(name);
  write_gguf_model(model, path);
  return load_model(path);
}

// Architectures whose GGUF files keep the Hugging Face RoPE pair order (no q/k permutation).
class SavedDummyModel : public ::testing::TestWithParam<const char*> {};

TEST_P(SavedDummyModel, LoadsBackAsTheSameModelWithBitIdenticalLogits) {
  const auto original = make_dummy_model(GetParam(), DType::F32, 11);
  const auto loaded = write_and_load(*original, std::string(GetParam()) + ".gguf");
  EXPECT_EQ(loaded->config.architecture, original->config.architecture);
  EXPECT_EQ(loaded->config.rope_layout, RopeLayout::RotateHalf);
  expect_same_model_config(original->config, loaded->config);
  expect_bit_identical(cpu_logits(*original), cpu_logits(*loaded));
}

INSTANTIATE_TEST_SUITE_P(Architectures, SavedDummyModel,
                         ::testing::Values("tiny-qwen2", "tiny-qwen3", "tiny-gemma2", "tiny-gemma3",
                                           "tiny-phi3", "tiny-qwen35"));

// A Llama whose in-memory q/k already pair adjacent dimensions is written as it is.
TEST(GgufWriter, LlamaWithAdjacentRopePairsLoadsBackBitIdentical) {
  for (const char* preset : {"tiny-llama", "tiny-mistral"}) {
    auto original = make_dummy_model(preset, DType::F32, 12);
    original->config.rope_layout = RopeLayout::Interleaved;
    const auto loaded = write_and_load(*original, std::string(preset) + ".gguf");
    EXPECT_EQ(loaded->config.architecture, "llama") << preset;  // llama.cpp's name for Mistral
    EXPECT_EQ(loaded->config.rope_layout, RopeLayout::Interleaved);
    expect_same_model_config(original->config, loaded->config);
    expect_bit_identical(cpu_logits(*original), cpu_logits(*loaded));
  }
}

void expect_same_moe_config(const ModelConfig& a, const ModelConfig& b) {
  EXPECT_EQ(a.num_experts, b.num_experts);
  EXPECT_EQ(a.num_experts_used, b.num_experts_used);
  EXPECT_EQ(a.expert_intermediate_size, b.expert_intermediate_size);
  EXPECT_EQ(a.moe_gating, b.moe_gating);
  EXPECT_EQ(a.moe_renormalize, b.moe_renormalize);
  EXPECT_EQ(a.moe_biases, b.moe_biases);
  EXPECT_EQ(a.has_output_bias, b.has_output_bias);
  EXPECT_EQ(a.attention_sinks, b.attention_sinks);
  const RopeScaling& x = a.rope_scaling;
  const RopeScaling& y = b.rope_scaling;
  EXPECT_EQ(x.type, y.type);
  if (x.type != RopeScaling::Type::Yarn) return;
  EXPECT_EQ(x.original_max_position_embeddings, y.original_max_position_embeddings);
  EXPECT_EQ(x.beta_fast, y.beta_fast);
  EXPECT_EQ(x.beta_slow, y.beta_slow);
  EXPECT_EQ(x.attention_factor, y.attention_factor);
  EXPECT_EQ(x.yarn_truncate, y.yarn_truncate);
}

// Every expert slice of the loaded model has the original's type, shape and bytes.
void expect_same_experts(const Model& original, const Model& loaded) {
  ASSERT_EQ(loaded.weights.experts.size(), original.weights.experts.size());
  for (size_t l = 0; l < original.weights.experts.size(); ++l) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role)) continue;
      const std::vector<WeightTensor>& a = original.weights.experts[l][role];
      const std::vector<WeightTensor>& b = loaded.weights.experts[l][role];
      ASSERT_EQ(a.size(), b.size()) << weight_role_name(role) << " layer " << l;
      for (size_t e = 0; e < a.size(); ++e) {
        ASSERT_EQ(a[e].dtype, b[e].dtype) << weight_role_name(role);
        ASSERT_EQ(a[e].shape, b[e].shape) << weight_role_name(role);
        ASSERT_EQ(a[e].num_bytes, b[e].num_bytes) << weight_role_name(role);
        EXPECT_EQ(std::memcmp(a[e].data, b[e].data, a[e].num_bytes), 0)
            << weight_role_name(role) << " layer " << l << " expert " << e;
      }
    }
  }
}

struct MoeCase {
  const char* preset;
  DType dtype;
};

class SavedMoeModel : public ::testing::TestWithParam<MoeCase> {};

// A mixture-of-experts model loads back with the same configuration, the same expert slices and
// bit-identical logits (Mixtral's in-memory q/k given llama's adjacent pairs, so the file keeps
// them as they are).
TEST_P(SavedMoeModel, LoadsBackWithTheSameExpertsAndBitIdenticalLogits) {
  const MoeCase& c = GetParam();
  auto original = make_dummy_model(c.preset, c.dtype, 19);
  const bool is_llama_file = original->config.architecture == "mixtral";
  if (is_llama_file) original->config.rope_layout = RopeLayout::Interleaved;
  const auto loaded =
      write_and_load(*original, str_cat(c.preset, "-", dtype_name(c.dtype), ".gguf"));
  EXPECT_EQ(loaded->config.architecture, original->config.architecture);
  expect_same_model_config(original->config, loaded->config);
  expect_same_moe_config(original->config, loaded->config);
  EXPECT_EQ(loaded->weight_dtypes(), original->weight_dtypes());
  EXPECT_EQ(loaded->weights.layers[1][WeightRole::Router].dtype, DType::F32);
  expect_same_experts(*original, *loaded);
  expect_bit_identical(cpu_logits(*original), cpu_logits(*loaded));
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, SavedMoeModel,
    ::testing::Values(MoeCase{"tiny-qwen3moe", DType::F32}, MoeCase{"tiny-qwen3moe", DType::Q4_K},
                      MoeCase{"tiny-mixtral", DType::F32}, MoeCase{"tiny-mixtral", DType::Q4_K},
                      MoeCase{"tiny-gpt-oss", DType::F32}, MoeCase{"tiny-gpt-oss", DType::Q8_0}),
    [](const ::testing::TestParamInfo<MoeCase>& case_info) {
      std::string name = str_cat(case_info.param.preset, "_", dtype_name(case_info.param.dtype));
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

// A Mixtral with the Hugging Face pair order is permuted like a Llama's q/k (its experts are
// not): the same model up to the order of q.k's sums.
TEST(GgufWriter, MixtralQkRowsArePermutedAndItsExpertsKept) {
  const auto model = make_dummy_model("tiny-mixtral", DType::F32, 20);
  const auto loaded = write_and_load(*model, "mixtral-rotate-half.gguf");
  EXPECT_EQ(loaded->config.rope_layout, RopeLayout::Interleaved);
  expect_same_experts(*model, *loaded);
  EXPECT_LT(max_relative_difference(cpu_logits(*model), cpu_logits(*loaded)), 1e-4);
}

// Types Sluice computes with today; every quantized type is written by
// QuantizedTypesAreWrittenAsTheirGgufTypes below.
TEST(GgufWriter, StoredTypesLoadBackBitIdentical) {
  for (const DType dtype : {DType::F16, DType::BF16, DType::Q8_0}) {
    const auto original = make_dummy_model("tiny-qwen3", dtype, 13);
    const auto loaded = write_and_load(*original, str_cat("qwen3-", dtype_name(dtype), ".gguf"));
    EXPECT_EQ(loaded->weights.layers[1][WeightRole::Wq].dtype, dtype);
    EXPECT_EQ(loaded->weights.layers[1][WeightRole::QNorm].dtype, DType::F32);
    EXPECT_EQ(loaded->weight_dtypes(), original->weight_dtypes());
    expect_bit_identical(cpu_logits(*original), cpu_logits(*loaded));
  }
}

// llama.cpp's converter permutes llama q_proj and k_proj rows with
// reshape(heads, 2, head_dim / 2).swapaxes(1, 2): row h*hd + s*hd/2 + i goes to h*hd + 2i + s.
void expect_rows_permuted_per_head(const GgufTensorInfo& file, const WeightTensor& model,
                                   int64_t num_heads, int64_t head_dim) {
  ASSERT_EQ(file.shape, model.shape);
  ASSERT_EQ(file.num_bytes, model.num_bytes);
  const size_t row_bytes = model.row_bytes();
  for (int64_t h = 0; h < num_heads; ++h) {
    for (int64_t i = 0; i < head_dim / 2; ++i) {
      for (int64_t s = 0; s < 2; ++s) {
        const int64_t file_row = h * head_dim + 2 * i + s;
        const int64_t model_row = h * head_dim + s * head_dim / 2 + i;
        ASSERT_EQ(std::memcmp(file.data + file_row * row_bytes, model.row(model_row), row_bytes), 0)
            << file.name << " row " << file_row;
      }
    }
  }
}

TEST(GgufWriter, LlamaQkRowsArePermutedAsLlamaCppsConverterDoes) {
  for (const DType dtype : {DType::F32, DType::Q4_K}) {
    const auto model = make_dummy_model("tiny-llama", dtype, 14);
    const std::string path = temp_file(str_cat("llama-", dtype_name(dtype), ".gguf"));
    write_gguf_model(*model, path);
    const auto gguf = GgufFile::open(path);
    const LayerWeights& l1 = model->weights.layers[1];
    expect_rows_permuted_per_head(*gguf->find_tensor("blk.1.attn_q.weight"), l1[WeightRole::Wq], 4,
                                  64);
    expect_rows_permuted_per_head(*gguf->find_tensor("blk.1.attn_k.weight"), l1[WeightRole::Wk], 2,
                                  64);
    const GgufTensorInfo* v = gguf->find_tensor("blk.1.attn_v.weight");
    ASSERT_EQ(v->num_bytes, l1[WeightRole::Wv].num_bytes);
    EXPECT_EQ(std::memcmp(v->data, l1[WeightRole::Wv].data, v->num_bytes), 0);  // v keeps its rows
  }
  // Sluice reads the file with adjacent pairs: the same model up to the order of the sums over
  // a head's dimensions in q.k.
  const auto model = make_dummy_model("tiny-llama", DType::F32, 14);
  const auto loaded = write_and_load(*model, "llama-rotate-half.gguf");
  EXPECT_EQ(loaded->config.rope_layout, RopeLayout::Interleaved);
  expect_same_model_config(model->config, loaded->config);
  EXPECT_LT(max_relative_difference(cpu_logits(*model), cpu_logits(*loaded)), 1e-4);
}

// llama3 scaling becomes rope_freqs.weight (llama.cpp has no llama3 scaling type): the
// frequencies Sluice derives from the file are the model's.
TEST(GgufWriter, Llama3RopeScalingBecomesRopeFreqs) {
  auto model = make_dummy_model("tiny-llama3", DType::F32, 15);
  const std::string path = temp_file("llama3.gguf");
  write_gguf_model(*model, path);
  const auto gguf = GgufFile::open(path);
  ASSERT_NE(gguf->find_tensor("rope_freqs.weight"), nullptr);
  EXPECT_FALSE(gguf->has("llama.rope.scaling.type"));
  const auto loaded = load_model(path);
  EXPECT_EQ(loaded->config.rope_scaling.type, RopeScaling::Type::None);
  const std::vector<double> expected = rope_inverse_frequencies(model->config, WeightTensor{});
  const std::vector<double> got =
      rope_inverse_frequencies(loaded->config, loaded->weights.rope_freq_factors);
  ASSERT_EQ(got.size(), expected.size());
  int num_scaled = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], 1e-6 * expected[i]) << "pair " << i;
    num_scaled += expected[i] != 1.0 / std::pow(500000.0, 2.0 * static_cast<double>(i) / 64);
  }
  EXPECT_GT(num_scaled, 0);                             // the shape puts pairs in the scaled band
  model->config.rope_layout = RopeLayout::Interleaved;  // no permutation: compare the RoPE alone
  const auto unpermuted = write_and_load(*model, "llama3-interleaved.gguf");
  EXPECT_LT(max_relative_difference(cpu_logits(*model), cpu_logits(*unpermuted)), 1e-4);
}

// Gemma's Hugging Face norms multiply by 1 + w; the file holds 1 + w, as llama.cpp's converter
// writes it.
TEST(GgufWriter, NormOffsetIsFoldedIntoTheNorms) {
  for (const char* preset : {"tiny-gemma2", "tiny-gemma3"}) {
    auto model = make_dummy_model(preset, DType::F32, 16);
    model->config.norm_weight_offset = 0.5f;  // the stored 1 acts as 1.5
    const std::string path = temp_file(std::string(preset) + "-offset.gguf");
    write_gguf_model(*model, path);
    const auto gguf = GgufFile::open(path);
    for (const char* name :
         {"blk.1.attn_norm.weight", "blk.1.post_ffw_norm.weight", "output_norm.weight"}) {
      float first;
      std::memcpy(&first, gguf->find_tensor(name)->data, 4);
      EXPECT_EQ(first, 1.5f) << name;
    }
    const auto loaded = load_model(path);
    EXPECT_EQ(loaded->config.norm_weight_offset, 0.0f);
    expect_bit_identical(cpu_logits(*model), cpu_logits(*loaded));
  }
}

std::set<std::string> metadata_keys(const GgufFile& gguf) {
  std::set<std::string> keys;
  for (const auto& [key, value] : gguf.metadata()) keys.insert(key);
  return keys;
}

// Tensor names outside the layers and in layer 0.
std::set<std::string> first_layer_tensor_names(const GgufFile& gguf) {
  std::set<std::string> names;
  for (const auto& t : gguf.tensors()) {
    if (!t.name.starts_with("blk.") || t.name.starts_with("blk.0.")) names.insert(t.name);
  }
  return names;
}

struct ConverterCase {
  const char* preset;
  const char* converter_file;  // the same architecture made by llama.cpp's converter
};

class WrittenLikeTheConverter : public ::testing::TestWithParam<ConverterCase> {};

// The file has every key llama.cpp's converter writes for the architecture (with the same value
// types), the converter's tensor names, types and ranks, 32-byte aligned data, and passes
// Sluice's GGUF reader checks.
TEST_P(WrittenLikeTheConverter, HasTheConvertersKeysAndTensors) {
  const ConverterCase& c = GetParam();
  const auto model = make_dummy_model(c.preset, DType::F32, 17);
  const std::string path = temp_file(std::string(c.preset) + "-keys.gguf");
  write_gguf_model(*model, path);
  const auto ours = GgufFile::open(path);
  const auto theirs = GgufFile::open(test::shared_path(c.converter_file));
  EXPECT_EQ(ours->version(), 3u);
  // Descriptive keys of the converter that llama.cpp does not need.
  const std::set<std::string> descriptive = {"general.type",
                                             "general.name",
                                             "general.size_label",
                                             "general.file_type",
                                             "tokenizer.ggml.padding_token_id",
                                             "tokenizer.ggml.add_space_prefix"};
  for (const std::string& key : metadata_keys(*theirs)) {
    if (descriptive.count(key)) continue;
    const GgufValue* value = ours->find(key);
    ASSERT_NE(value, nullptr) << "missing " << key;
    EXPECT_EQ(value->type, theirs->find(key)->type) << key;
    EXPECT_EQ(value->element_type, theirs->find(key)->element_type) << key;
  }
  std::set<std::string> expected = first_layer_tensor_names(*theirs);
  if (!model->config.tie_word_embeddings) expected.insert("output.weight");
  EXPECT_EQ(first_layer_tensor_names(*ours), expected);
  for (const auto& t : ours->tensors()) {
    EXPECT_EQ(t.offset % 32, 0u) << t.name;
    const GgufTensorInfo* same = theirs->find_tensor(t.name);
    if (!same) continue;
    EXPECT_EQ(t.ggml_type, same->ggml_type) << t.name;  // F32 converter files: all F32
    EXPECT_EQ(t.shape.size(), same->shape.size()) << t.name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Architectures, WrittenLikeTheConverter,
    ::testing::Values(
        ConverterCase{"tiny-llama", "models/tiny-arch/llama-headdim/gguf/llama-headdim-F32.gguf"},
        ConverterCase{"tiny-mistral", "models/tiny-arch/llama-headdim/gguf/llama-headdim-F32.gguf"},
        ConverterCase{"tiny-qwen3", "models/tiny-arch/qwen3/gguf/qwen3-F32.gguf"},
        ConverterCase{"tiny-gemma2", "models/tiny-arch/gemma2/gguf/gemma2-F32.gguf"},
        ConverterCase{"tiny-gemma3", "models/tiny-arch/gemma3/gguf/gemma3-F32.gguf"},
        ConverterCase{"tiny-phi3", "models/tiny-arch/phi3/gguf/phi3-F32.gguf"},
        ConverterCase{"tiny-qwen3moe", "models/tiny-arch/qwen3moe/gguf/qwen3moe-F32.gguf"},
        ConverterCase{"tiny-mixtral", "models/tiny-arch/mixtral/gguf/mixtral-F32.gguf"},
        ConverterCase{"tiny-gpt-oss", "models/tiny-arch/gpt-oss/gguf/gpt-oss-F32.gguf"},
        ConverterCase{"tiny-qwen35", "models/tiny-arch/qwen35/gguf/qwen35-F32.gguf"}),
    [](const ::testing::TestParamInfo<ConverterCase>& case_info) {
      std::string name = case_info.param.preset;
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(GgufWriter, KeysCarryTheModelsOptions) {
  const auto gemma3 = make_dummy_model("tiny-gemma3");
  std::string path = temp_file("gemma3-options.gguf");
  write_gguf_model(*gemma3, path);
  auto gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("general.architecture"), "gemma3");
  EXPECT_EQ(gguf->get_int("gemma3.attention.sliding_window"), 4);
  EXPECT_EQ(gguf->get_float("gemma3.rope.freq_base"), 1000000.0);
  EXPECT_EQ(gguf->get_float("gemma3.rope.freq_base_swa"), 10000.0);
  EXPECT_EQ(gguf->get_string("gemma3.rope.scaling.type"), "linear");
  EXPECT_EQ(gguf->get_float("gemma3.rope.scaling.factor"), 8.0);
  EXPECT_FALSE(gguf->has("gemma3.attention.sliding_window_pattern"));  // llama.cpp assumes 6

  const auto gemma2 = make_dummy_model("tiny-gemma2");
  path = temp_file("gemma2-options.gguf");
  write_gguf_model(*gemma2, path);
  gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_float("gemma2.attn_logit_softcapping"), 50.0);
  EXPECT_EQ(gguf->get_float("gemma2.final_logit_softcapping"), 30.0);
  EXPECT_EQ(gguf->find_tensor("output.weight"), nullptr);  // tied

  const auto phi3 = make_dummy_model("tiny-phi3");
  path = temp_file("phi3-options.gguf");
  write_gguf_model(*phi3, path);
  gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_int("phi3.rope.dimension_count"), 32);
  EXPECT_EQ(gguf->find_tensor("blk.0.attn_qkv.weight")->shape,
            (std::vector<int64_t>{256 + 2 * 128, 256}));
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_up.weight")->shape, (std::vector<int64_t>{1024, 256}));
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_gate.weight"), nullptr);

  const auto mistral = make_dummy_model("tiny-mistral");
  path = temp_file("mistral-options.gguf");
  write_gguf_model(*mistral, path);
  gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("general.architecture"), "llama");
  EXPECT_EQ(gguf->get_int("llama.attention.key_length"), 128);
  EXPECT_EQ(gguf->get_int("llama.rope.dimension_count"), 128);
  EXPECT_EQ(gguf->get_int("llama.embedding_length"), 256);
}

// The expert keys and stacks as llama.cpp's converter writes each family: the stacks' header
// dimensions are [cols, rows, num_experts] (the reader gives them outermost first), expert e's
// bytes at e slices into the stack, the router F32 whatever the matrices' type.
TEST(GgufWriter, MoeKeysAndExpertStacksAreLlamaCpps) {
  const auto qwen = make_dummy_model("tiny-qwen3moe", DType::Q8_0, 21);
  std::string path = temp_file("qwen3moe-keys.gguf");
  write_gguf_model(*qwen, path);
  auto gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("general.architecture"), "qwen3moe");
  EXPECT_EQ(gguf->get_int("qwen3moe.expert_count"), 4);
  EXPECT_EQ(gguf->get_int("qwen3moe.expert_used_count"), 2);
  EXPECT_EQ(gguf->get_int("qwen3moe.expert_feed_forward_length"), 256);
  EXPECT_EQ(gguf->get_int("qwen3moe.feed_forward_length"), 512);
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_gate_inp.weight")->ggml_type, 0u);  // F32
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_gate_inp.weight")->shape, (std::vector<int64_t>{4, 256}));
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_down.weight"), nullptr);
  const GgufTensorInfo* down = gguf->find_tensor("blk.1.ffn_down_exps.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->ggml_type, dtype_traits(DType::Q8_0).ggml_type);
  EXPECT_EQ(down->shape, (std::vector<int64_t>{4, 256, 256}));
  const WeightTensor& expert2 = qwen->weights.experts[1][WeightRole::DownExps][2];
  ASSERT_EQ(down->num_bytes, 4 * expert2.num_bytes);
  EXPECT_EQ(std::memcmp(down->data + 2 * expert2.num_bytes, expert2.data, expert2.num_bytes), 0);

  const auto mixtral = make_dummy_model("tiny-mixtral", DType::F32, 21);
  path = temp_file("mixtral-keys.gguf");
  write_gguf_model(*mixtral, path);
  gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("general.architecture"), "llama");
  EXPECT_EQ(gguf->get_int("llama.expert_count"), 4);
  EXPECT_EQ(gguf->get_int("llama.feed_forward_length"), 512);  // the experts' width
  EXPECT_FALSE(gguf->has("llama.expert_feed_forward_length"));
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_gate_exps.weight")->shape,
            (std::vector<int64_t>{4, 512, 256}));
  EXPECT_EQ(gguf->find_tensor("blk.0.ffn_down_exps.weight")->shape,
            (std::vector<int64_t>{4, 256, 512}));

  const auto oss = make_dummy_model("tiny-gpt-oss", DType::F32, 21);
  path = temp_file("gpt-oss-keys.gguf");
  write_gguf_model(*oss, path);
  gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("general.architecture"), "gpt-oss");
  EXPECT_EQ(gguf->get_int("gpt-oss.attention.sliding_window"), 4);
  EXPECT_EQ(gguf->get_string("gpt-oss.rope.scaling.type"), "yarn");
  EXPECT_EQ(gguf->get_float("gpt-oss.rope.scaling.factor"), 4.0);
  EXPECT_EQ(gguf->get_int("gpt-oss.rope.scaling.original_context_length"), 64);
  EXPECT_FALSE(gguf->has("gpt-oss.rope.scaling.attn_factor"));  // the implied 1 + 0.1 ln 4
  EXPECT_NE(gguf->find_tensor("blk.1.post_attention_norm.weight"), nullptr);
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_norm.weight"), nullptr);
  EXPECT_EQ(gguf->find_tensor("blk.1.attn_sinks.weight")->shape, (std::vector<int64_t>{4}));
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_up_exps.bias")->shape, (std::vector<int64_t>{4, 256}));
  EXPECT_EQ(gguf->find_tensor("blk.1.ffn_gate_inp.bias")->shape, (std::vector<int64_t>{4}));
}

// A SentencePiece vocabulary llama.cpp accepts: unique tokens, scores and types for each, the
// byte tokens its tokenizer falls back to, and the special ids; Sluice's tokenizer loads it.
TEST(GgufWriter, VocabularyIsAUsableSentencePieceVocabulary) {
  const auto model = make_dummy_model("tiny-qwen3");
  const std::string path = temp_file("vocab.gguf");
  write_gguf_model(*model, path);
  const auto gguf = GgufFile::open(path);
  EXPECT_EQ(gguf->get_string("tokenizer.ggml.model"), "llama");
  const auto& tokens = gguf->get_string_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 512u);
  EXPECT_EQ(std::set<std::string>(tokens.begin(), tokens.end()).size(), tokens.size());
  EXPECT_EQ(gguf->get_number_array("tokenizer.ggml.scores").size(), 512u);
  const auto& types = gguf->get_number_array("tokenizer.ggml.token_type");
  ASSERT_EQ(types.size(), 512u);
  EXPECT_EQ(std::count(types.begin(), types.end(), 6.0), 256);  // byte tokens
  for (const char* byte : {"<0x00>", "<0x0A>", "<0xFF>"})
    EXPECT_EQ(std::count(tokens.begin(), tokens.end(), byte), 1) << byte;
  EXPECT_EQ(tokens[static_cast<size_t>(gguf->get_int("tokenizer.ggml.bos_token_id"))], "<s>");
  EXPECT_EQ(tokens[static_cast<size_t>(gguf->get_int("tokenizer.ggml.eos_token_id"))], "</s>");
  EXPECT_EQ(gguf->get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(gguf->get_int("tokenizer.ggml.eos_token_id"), 2);

  const auto tokenizer = load_tokenizer_file(path, 512);
  const std::string text = "Hello, world!\nzz \xc3\xa9";
  const std::vector<int32_t> ids = tokenizer->encode(text, EncodeOptions{.add_bos = false});
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(tokenizer->decode(ids), text);
}

// Every GGUF block type is written as itself; the reader accepts the sizes.
TEST(GgufWriter, QuantizedTypesAreWrittenAsTheirGgufTypes) {
  for (const DTypeTraits& traits : all_dtype_traits()) {
    if (!traits.quantized) continue;
    const auto model = make_dummy_model("tiny-qwen3", traits.dtype, 18);
    const std::string path = temp_file(str_cat("qwen3-", traits.name, ".gguf"));
    write_gguf_model(*model, path);
    const auto gguf = GgufFile::open(path);
    for (const char* name :
         {"token_embd.weight", "blk.1.attn_q.weight", "blk.1.ffn_down.weight", "output.weight"}) {
      const GgufTensorInfo* t = gguf->find_tensor(name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->ggml_type, traits.ggml_type) << traits.name << " " << name;
    }
    const GgufTensorInfo* down = gguf->find_tensor("blk.1.ffn_down.weight");
    const WeightTensor& w = model->weights.layers[1][WeightRole::Down];
    ASSERT_EQ(down->num_bytes, w.num_bytes) << traits.name;
    EXPECT_EQ(std::memcmp(down->data, w.data, w.num_bytes), 0) << traits.name;
    EXPECT_EQ(gguf->find_tensor("blk.1.attn_q_norm.weight")->ggml_type, 0u);  // F32
  }
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  return names;
}

TEST(GgufWriter, AMissingFolderIsNamed) {
  const auto model = make_dummy_model("tiny-qwen3");
  const std::string path = test::make_temp_dir("gguf-writer") + "/no-such-folder/model.gguf";
  try {
    write_gguf_model(*model, path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr(path));
  }
}

// A write that stops short (here: the file size limit, as a full disk would) is an error naming
// the file; no half file is left, and a file already at the path is untouched.
TEST(GgufWriter, AShortWriteIsReportedAndLeavesNoHalfFile) {
  const auto model = make_dummy_model("tiny-qwen3");
  const std::string dir = test::make_temp_dir("gguf-writer-full");
  const std::string path = dir + "/model.gguf";
  test::write_file(path, "the previous file");
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  rlimit small = old_limit;
  small.rlim_cur = 64 << 10;
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // the write fails with EFBIG instead
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message;
  try {
    write_gguf_model(*model, path);
  } catch (const Error& e) {
    message = e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old_limit);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(message, HasSubstr(path));
  EXPECT_THAT(message, HasSubstr("cannot write"));
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"model.gguf"});
  EXPECT_EQ(test::read_file(path), "the previous file");
}

// Options a GGUF file cannot carry to llama.cpp are refused by name, before any file is made.
TEST(GgufWriter, OptionsTheFileCannotCarryAreRefused) {
  const std::string dir = test::make_temp_dir("gguf-writer-refused");
  auto llama = make_dummy_model("tiny-llama");
  llama->config.sliding_window = 8;  // Mistral v0.1 style: llama.cpp's llama has no window
  apply_architecture(architecture_of(llama->config), llama->config);
  try {
    write_gguf_model(*llama, dir + "/llama.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("sliding window"));
    EXPECT_THAT(e.what(), HasSubstr("dummy:tiny-llama"));
  }
  auto gemma3 = make_dummy_model("tiny-gemma3");
  apply_architecture(architecture_of(gemma3->config), gemma3->config, 3, 10000.0f);
  try {
    write_gguf_model(*gemma3, dir + "/gemma3.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("every 3 layers"));
  }
  auto gemma2 = make_dummy_model("tiny-gemma2");
  gemma2->config.tie_word_embeddings = false;  // llama.cpp's Gemma 2 has no output.weight
  try {
    write_gguf_model(*gemma2, dir + "/gemma2.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("LM head"));
  }
  auto qwen3 = make_dummy_model("tiny-qwen3");
  qwen3->config.final_logit_softcap = 30.0f;
  try {
    write_gguf_model(*qwen3, dir + "/qwen3.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("soft-capping"));
  }
  EXPECT_TRUE(files_in(dir).empty());
}

// Mixture-of-experts options llama.cpp fixes for the file's family are refused by name.
TEST(GgufWriter, MoeOptionsLlamaCppFixesAreRefused) {
  const std::string dir = test::make_temp_dir("gguf-writer-moe-refused");
  auto mixtral = make_dummy_model("tiny-mixtral");
  mixtral->config.intermediate_size = 1024;  // llama.cpp would size the experts by it
  try {
    write_gguf_model(*mixtral, dir + "/mixtral.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("experts of FFN 512"));
  }
  auto qwen = make_dummy_model("tiny-qwen3moe");
  qwen->config.moe_renormalize = false;  // transformers' default; llama.cpp always renormalises
  try {
    write_gguf_model(*qwen, dir + "/qwen.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("renormalised"));
  }
  auto oss = make_dummy_model("tiny-gpt-oss");
  oss->config.rope_scaling.yarn_truncate = false;
  apply_architecture(architecture_of(oss->config), oss->config);
  try {
    write_gguf_model(*oss, dir + "/oss.gguf");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("YaRN"));
  }
  EXPECT_TRUE(files_in(dir).empty());
}

}  // namespace
}  // namespace sluice
