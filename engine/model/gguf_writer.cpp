#include "engine/model/gguf_writer.h"

#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <span>
#include <vector>

#include "engine/core/error.h"
#include "engine/model/architecture.h"
#include "engine/model/gguf_reader.h"
#include "engine/model/synthetic_vocab.h"
#include "engine/model/weight_roles.h"

namespace sluice {

namespace {

static_assert(std::endian::native == std::endian::little, "GGUF is little-endian");

constexpr uint32_t kGgufVersion = 3;
constexpr size_t kAlignment = 32;  // GGUF's default: the file needs no general.alignment key
// llama.cpp's gemma3 loader makes every 6th layer global whatever the file says.
constexpr int kLlamaCppGemma3Period = 6;

// The metadata section, serialised as keys are added.
class GgufMetadata {
 public:
  void add_string(const std::string& key, const std::string& value) {
    put_key(key, GgufType::String);
    put_string(value);
  }
  void add_u32(const std::string& key, int64_t value) {
    put_key(key, GgufType::UInt32);
    put(static_cast<uint32_t>(value));
  }
  void add_f32(const std::string& key, float value) {
    put_key(key, GgufType::Float32);
    put(value);
  }
  void add_bool(const std::string& key, bool value) {
    put_key(key, GgufType::Bool);
    put(static_cast<uint8_t>(value ? 1 : 0));
  }
  void add_strings(const std::string& key, const std::vector<std::string>& values) {
    put_array_header(key, GgufType::String, values.size());
    for (const auto& v : values) put_string(v);
  }
  template <typename T>
  void add_numbers(const std::string& key, GgufType element_type, const std::vector<T>& values) {
    put_array_header(key, element_type, values.size());
    for (const T v : values) put(v);
  }

  uint64_t num_keys() const { return num_keys_; }
  const std::string& bytes() const { return out_; }

 private:
  template <typename T>
  void put(T value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put_string(const std::string& s) {
    put(static_cast<uint64_t>(s.size()));
    out_ += s;
  }
  void put_key(const std::string& key, GgufType type) {
    put_string(key);
    put(static_cast<uint32_t>(type));
    ++num_keys_;
  }
  void put_array_header(const std::string& key, GgufType element_type, size_t count) {
    put_key(key, GgufType::Array);
    put(static_cast<uint32_t>(element_type));
    put(static_cast<uint64_t>(count));
  }

  std::string out_;
  uint64_t num_keys_ = 0;
};

// A tensor of the file: its bytes in file order are views of the model's memory (pieces: a whole
// tensor, or rows in a new order or from several tensors) or F32 values made here.
struct OutputTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;  // outermost first
  std::vector<std::span<const uint8_t>> pieces;
  std::vector<float> values;

  size_t num_bytes() const {
    if (!values.empty()) return values.size() * sizeof(float);
    size_t n = 0;
    for (const auto& p : pieces) n += p.size();
    return n;
  }
};

// How the model's tensors become the file's.
struct FileLayout {
  const Architecture* arch = nullptr;       // the model's row of the architecture table
  std::string gguf_arch;                    // general.architecture
  const Architecture* file_arch = nullptr;  // the row a reader of the file takes it for
  bool permute_qk = false;                  // the file's RoPE pairs differ from the model's
  bool to_interleaved = false;              // ... and are adjacent in the file
  float norm_offset = 0.0f;                 // folded into every norm weight
};

// llama.cpp's converter writes Mistral and Mixtral models as llama (MistralForCausalLM and
// MixtralForCausalLM are LlamaModels; a llama file with experts is a Mixtral).
std::string gguf_architecture_name(const Architecture& arch) {
  if (arch.gguf_name) return arch.gguf_name;
  const std::string_view name = arch.name;
  if (name == "mistral" || name == "mixtral") return "llama";
  fail("architecture ", arch.name, " has no GGUF form llama.cpp reads");
}

std::vector<float> widen(const WeightTensor& t) {
  std::vector<float> out(static_cast<size_t>(t.num_elements()));
  dequantize_row(t.dtype, t.data, out.data(), t.num_elements());
  return out;
}

// The source row of each row of a [num_heads * head_dim, ...] q or k tensor when its RoPE pairs
// move from (i, i + head_dim / 2) to (2i, 2i + 1) (to_interleaved), or back. This is the
// permutation llama.cpp's converter applies to llama q_proj and k_proj (reshape to
// [heads, 2, head_dim / 2], swap the last two axes).
std::vector<int64_t> rope_pair_order(int64_t num_heads, int64_t head_dim, bool to_interleaved) {
  std::vector<int64_t> order(static_cast<size_t>(num_heads * head_dim));
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < num_heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t s = 0; s < 2; ++s) {
        const int64_t interleaved = h * head_dim + 2 * i + s;
        const int64_t rotate_half = h * head_dim + s * half + i;
        if (to_interleaved) {
          order[static_cast<size_t>(interleaved)] = rotate_half;
        } else {
          order[static_cast<size_t>(rotate_half)] = interleaved;
        }
      }
    }
  }
  return order;
}

OutputTensor floats_tensor(const std::string& name, std::vector<float> values) {
  OutputTensor out;
  out.name = name;
  out.shape = {static_cast<int64_t>(values.size())};
  out.values = std::move(values);
  return out;
}

// The tensor of a role as the file holds it. Precondition: the model has the role's weight.
OutputTensor role_tensor(const Model& model, const FileLayout& layout, WeightRole role,
                         const WeightTensor& t, int layer) {
  const ModelConfig& c = model.config;
  const std::string name = tensor_name(role, *layout.arch, NameScheme::Gguf, layer);
  const bool is_q = role == WeightRole::Wq || role == WeightRole::Bq;
  const bool is_k = role == WeightRole::Wk || role == WeightRole::Bk;
  const bool is_head_norm = role == WeightRole::QNorm || role == WeightRole::KNorm;
  std::vector<int64_t> order;
  if (layout.permute_qk && (is_q || is_k || is_head_norm)) {
    order = rope_pair_order(is_q   ? c.num_heads
                            : is_k ? c.num_kv_heads
                                   : 1,
                            c.head_dim, layout.to_interleaved);
  }
  if (t.shape.size() < 2) {  // norms and biases: F32, as llama.cpp's converter keeps them
    std::vector<float> values = widen(t);
    if (is_norm_role(role)) {
      for (float& v : values) v += layout.norm_offset;
    }
    if (!order.empty()) {
      const std::vector<float> source = values;
      for (size_t i = 0; i < order.size(); ++i) values[i] = source[static_cast<size_t>(order[i])];
    }
    return floats_tensor(name, std::move(values));
  }
  OutputTensor out;
  out.name = name;
  out.dtype = t.dtype;
  out.shape = t.shape;
  if (order.empty()) {
    out.pieces.emplace_back(t.data, t.num_bytes);
  } else {
    for (const int64_t r : order) out.pieces.emplace_back(t.row(r), t.row_bytes());
  }
  return out;
}

// A fused tensor of the file: its parts' rows one after the other.
OutputTensor fused_tensor(const std::string& name, const std::vector<OutputTensor>& parts) {
  OutputTensor out = parts.front();
  out.name = name;
  for (size_t i = 1; i < parts.size(); ++i) {
    const OutputTensor& p = parts[i];
    if (p.dtype != out.dtype || p.shape.back() != out.shape.back()) {
      fail("tensor ", name, ": its parts ", parts.front().name, " and ", p.name,
           " differ in type or row length");
    }
    out.shape[0] += p.shape[0];
    out.pieces.insert(out.pieces.end(), p.pieces.begin(), p.pieces.end());
  }
  return out;
}

// An expert role's stack as the file holds it: the experts' slices one after the other, shaped
// [num_experts, ...] (ne = [cols, rows, num_experts] in the header, as llama.cpp's converter
// stacks them); biases widened to F32.
OutputTensor expert_stack_tensor(const Model& model, const FileLayout& layout, WeightRole role,
                                 int layer) {
  const ModelConfig& c = model.config;
  OutputTensor out;
  out.name = tensor_name(role, *layout.arch, NameScheme::Gguf, layer);
  const auto& experts = model.weights.experts;
  const std::vector<WeightTensor>* slices = static_cast<size_t>(layer) < experts.size()
                                                ? &experts[static_cast<size_t>(layer)][role]
                                                : nullptr;
  if (!slices || slices->size() != static_cast<size_t>(c.num_experts)) {
    fail(model.path, ": the ", c.architecture, " model has ", slices ? slices->size() : 0, " of ",
         c.num_experts, " ", weight_role_name(role), " experts in layer ", layer);
  }
  const bool is_bias = weight_kind(role) == WeightKind::ExpertBiases;
  const std::vector<int64_t> slice_shape = expert_slice_shape(role, c);
  out.dtype = is_bias ? DType::F32 : slices->front().dtype;
  for (const WeightTensor& t : *slices) {
    if (t.shape != slice_shape || (!is_bias && t.dtype != out.dtype))
      fail("tensor ", out.name, ": its experts differ in type or shape (", t.name, ")");
    if (is_bias) {
      const std::vector<float> values = widen(t);
      out.values.insert(out.values.end(), values.begin(), values.end());
    } else {
      out.pieces.emplace_back(t.data, t.num_bytes);
    }
  }
  out.shape = weight_shape(role, c);
  return out;
}

const WeightTensor& require_weight(const Model& model, const WeightTensor& t, WeightRole role,
                                   int layer) {
  if (t.empty()) {
    fail(model.path, ": the ", model.config.architecture, " model has no ", weight_role_name(role),
         " weight in layer ", layer);
  }
  return t;
}

// The RoPE factors of llama3 scaling, computed as llama.cpp's converter does: the divisor of
// each pair's frequency (1 for short wavelengths, `factor` for long ones, a blend between).
std::vector<float> llama3_rope_factors(const ModelConfig& c) {
  const RopeScaling& s = c.rope_scaling;
  const double low_freq_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
  const double high_freq_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
  const int dims = c.rope_dims();
  std::vector<float> factors(static_cast<size_t>(dims / 2));
  for (int i = 0; i < dims / 2; ++i) {
    const double freq = 1.0 / std::pow(static_cast<double>(c.rope_theta), 2.0 * i / dims);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double factor = 1.0;
    if (wavelen > low_freq_wavelen) {
      factor = s.factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                            (s.high_freq_factor - s.low_freq_factor);
      factor = 1.0 / ((1.0 - smooth) / s.factor + smooth);
    }
    factors[static_cast<size_t>(i)] = static_cast<float>(factor);
  }
  return factors;
}

// rope_freqs.weight: llama3 scaling's factors times any the model already has; empty when none.
std::vector<float> rope_freq_factors(const Model& model) {
  const ModelConfig& c = model.config;
  std::vector<float> factors;
  if (c.rope_scaling.type == RopeScaling::Type::Llama3) factors = llama3_rope_factors(c);
  const WeightTensor& existing = model.weights.rope_freq_factors;
  if (!existing.empty()) {
    const std::vector<float> values = widen(existing);
    if (factors.empty()) factors.assign(values.size(), 1.0f);
    for (size_t i = 0; i < factors.size() && i < values.size(); ++i) factors[i] *= values[i];
  }
  return factors;
}

std::vector<OutputTensor> file_tensors(const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  const ModelWeights& w = model.weights;
  std::vector<OutputTensor> out;
  out.push_back(role_tensor(model, layout, WeightRole::TokenEmbedding, w.token_embedding, 0));
  if (std::vector<float> factors = rope_freq_factors(model); !factors.empty())
    out.push_back(floats_tensor("rope_freqs.weight", std::move(factors)));
  for (int l = 0; l < c.num_layers; ++l) {
    const LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    const auto part = [&](WeightRole role) {
      return role_tensor(model, layout, role, require_weight(model, layer[role], role, l), l);
    };
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role) || !weight_role_in_files(role, *layout.arch, c, l)) continue;
      if (is_expert_role(role)) {
        out.push_back(expert_stack_tensor(model, layout, role, l));
        continue;
      }
      const std::string name = tensor_name(role, *layout.arch, NameScheme::Gguf, l);
      const std::span<const WeightRole> parts = fused_parts(role);
      if (parts.empty()) {
        out.push_back(part(role));
        continue;
      }
      std::vector<OutputTensor> pieces;
      for (const WeightRole p : parts) pieces.push_back(part(p));
      out.push_back(fused_tensor(name, pieces));
    }
  }
  out.push_back(role_tensor(model, layout, WeightRole::FinalNorm, w.final_norm, 0));
  if (!c.tie_word_embeddings)
    out.push_back(role_tensor(model, layout, WeightRole::LmHead, w.lm_head, 0));
  return out;
}

// Gemma 3's local/global pattern: every period-th layer global (the first global layer + 1).
int window_period(const ModelConfig& c) {
  for (int l = 0; l < c.num_layers; ++l) {
    if (c.layers[static_cast<size_t>(l)].sliding_window == 0) return l + 1;
  }
  return kLlamaCppGemma3Period;
}

// The RoPE base of the sliding-window layers when it differs from the global one; 0 otherwise.
float local_rope_theta(const ModelConfig& c) {
  for (const LayerConfig& l : c.layers) {
    if (l.sliding_window > 0 && l.rope_theta != c.rope_theta) return l.rope_theta;
  }
  return 0.0f;
}

[[noreturn]] void refuse(const Model& model, const FileLayout& layout, const std::string& what) {
  fail(model.path, ": ", what, " cannot be written to a ", layout.gguf_arch,
       " GGUF file that llama.cpp would run as the same model");
}

// Refuses mixture-of-experts and YaRN options that llama.cpp's loaders fix whatever a file says.
void check_llama_cpp_moe_rules(const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  const RopeScaling& yarn = c.rope_scaling;
  if (yarn.type == RopeScaling::Type::Yarn && !yarn.yarn_truncate)
    refuse(model, layout, "YaRN without rounding the ramp's ends (llama.cpp always rounds)");
  if (!c.is_moe()) return;
  if (layout.gguf_arch == "llama" && c.expert_intermediate_size != c.intermediate_size) {
    refuse(model, layout,
           str_cat("experts of FFN ", c.expert_intermediate_size, " beside a dense FFN of ",
                   c.intermediate_size, " (llama.cpp sizes a llama file's experts by the latter)"));
  }
  if (c.moe_gating == MoeGating::SoftmaxTopK && !c.moe_renormalize)
    refuse(model, layout, "top-k expert weights that are not renormalised");
}

// A hybrid's attention period: the first attention layer's index + 1 (0 without one).
int attention_interval(const ModelConfig& c) {
  for (int l = 0; l < c.num_layers; ++l) {
    if (!c.is_deltanet_layer(l)) return l + 1;
  }
  return 0;
}

// A hybrid as llama.cpp's qwen35 loader reads it: value heads tiled (a Hugging Face folder's
// grouped heads would need every value-head tensor reordered, as the converter does), norms
// stored as used (HF's 1 + w would need the + 1 written in), attention every n-th layer.
void check_llama_cpp_hybrid_rules(const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  if (c.deltanet.grouped_v_heads)
    refuse(model, layout, "Gated DeltaNet value heads in Hugging Face's grouped order");
  if (c.norm_weight_offset != 0.0f) refuse(model, layout, "norms stored as w for 1 + w");
  const int interval = attention_interval(c);
  for (int l = 0; l < c.num_layers; ++l) {
    if (interval == 0 || c.is_deltanet_layer(l) != ((l + 1) % interval != 0))
      refuse(model, layout, "attention layers that are not every n-th layer");
  }
}

// Refuses options that llama.cpp's loader for the file's architecture fixes or cannot take,
// whatever the file says.
void check_llama_cpp_rules(const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  const Architecture& file_arch = *layout.file_arch;
  if (c.rope_scaling.type == RopeScaling::Type::LongRope) refuse(model, layout, "LongRoPE scaling");
  if (c.attention_scale > 0.0f &&
      c.attention_scale != 1.0f / std::sqrt(static_cast<float>(c.head_dim))) {
    refuse(model, layout,
           str_cat("an attention scale of ", c.attention_scale, " (not 1/sqrt(head_dim))"));
  }
  if (!rope_freq_factors(model).empty() && layout.gguf_arch != "llama")
    refuse(model, layout, "llama3 RoPE scaling (rope_freqs.weight)");
  if (layout.permute_qk && c.rope_dims() != c.head_dim)
    refuse(model, layout, "partial rotary with llama RoPE");
  if (c.is_hybrid()) check_llama_cpp_hybrid_rules(model, layout);
  if (file_arch.window_pattern == WindowPattern::PeriodGlobal && c.sliding_window > 0 &&
      window_period(c) != kLlamaCppGemma3Period) {
    refuse(model, layout,
           str_cat("a global layer every ", window_period(c), " layers (llama.cpp assumes ",
                   kLlamaCppGemma3Period, ")"));
  }
  if (layout.gguf_arch != "gemma2" && (c.attn_logit_softcap > 0.0f || c.final_logit_softcap > 0.0f))
    refuse(model, layout, "logit soft-capping (llama.cpp applies it to Gemma 2 only)");
  if (file_arch.post_norms && !c.tie_word_embeddings)
    refuse(model, layout, "a separate LM head (llama.cpp's Gemma uses the embedding)");
  check_llama_cpp_moe_rules(model, layout);
  if (layout.arch->fused_qkv && c.q_size() != c.hidden_size) {
    refuse(model, layout,
           "heads x head_dim different from the hidden size (llama.cpp's phi3 assumes them equal)");
  }
}

// Refuses a model whose options differ from those a reader derives from the keys written: the
// file's architecture sets the per-layer windows and RoPE bases by its own pattern.
void check_derived_options(const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  const Architecture& file_arch = *layout.file_arch;
  ModelConfig derived = c;
  if (file_arch.window_pattern != WindowPattern::EvenLayers &&
      file_arch.window_pattern != WindowPattern::PeriodGlobal) {
    derived.sliding_window = 0;  // the architecture's readers ignore the key
  }
  apply_architecture(file_arch, derived, window_period(c), local_rope_theta(c));
  if (derived.activation != c.activation || derived.qk_norm != c.qk_norm ||
      derived.post_norms != c.post_norms || derived.embedding_scale != c.embedding_scale) {
    refuse(model, layout, "the activation, q/k norm, post norm or embedding scale of this model");
  }
  if (derived.has_output_bias != c.has_output_bias ||
      derived.attention_sinks != c.attention_sinks || derived.moe_gating != c.moe_gating ||
      derived.moe_biases != c.moe_biases) {
    refuse(model, layout, "the output bias, attention sinks, expert gating or expert biases");
  }
  for (size_t l = 0; l < c.layers.size(); ++l) {
    const LayerConfig& a = derived.layers[l];
    const LayerConfig& b = c.layers[l];
    if (a.sliding_window != b.sliding_window || a.rope_theta != b.rope_theta ||
        a.rope_scaling.type != b.rope_scaling.type ||
        a.rope_scaling.factor != b.rope_scaling.factor) {
      refuse(model, layout,
             str_cat("layer ", l, "'s sliding window (", b.sliding_window, ") or RoPE base (",
                     b.rope_theta, ")"));
    }
  }
}

// YaRN as llama.cpp's converter writes it for gpt-oss (type, factor, original context, betas),
// and attn_factor only when the attention factor is not the 1 + 0.1 ln(factor) that readers
// derive (the key multiplies it).
void add_yarn_keys(GgufMetadata& meta, const RopeScaling& s, const std::string& a) {
  meta.add_string(a + "rope.scaling.type", "yarn");
  meta.add_f32(a + "rope.scaling.factor", s.factor);
  meta.add_u32(a + "rope.scaling.original_context_length", s.original_max_position_embeddings);
  meta.add_f32(a + "rope.scaling.yarn_beta_fast", s.beta_fast);
  meta.add_f32(a + "rope.scaling.yarn_beta_slow", s.beta_slow);
  const float implied = 1.0f + 0.1f * std::log(s.factor);
  if (s.attention_factor != implied)
    meta.add_f32(a + "rope.scaling.attn_factor", s.attention_factor / implied);
}

// The expert counts as llama.cpp's converters write them: every family gives expert_count and
// expert_used_count; Qwen3-MoE and gpt-oss name the experts' FFN width, while a llama file's
// experts take feed_forward_length (check_llama_cpp_moe_rules).
void add_expert_keys(GgufMetadata& meta, const ModelConfig& c, const FileLayout& layout) {
  const std::string a = layout.gguf_arch + ".";
  meta.add_u32(a + "expert_count", c.num_experts);
  meta.add_u32(a + "expert_used_count", c.num_experts_used);
  if (layout.gguf_arch != "llama")
    meta.add_u32(a + "expert_feed_forward_length", c.expert_intermediate_size);
}

// Qwen3.5 as llama.cpp's converter writes it: the ssm.* shape, the attention period (layer i
// attends iff (i + 1) % interval == 0) and the M-RoPE sections llama.cpp requires (text uses
// one position for all of them: plain partial RoPE), split over the rotated pairs as the
// published configs do ([11, 11, 10] of 32 pairs).
void add_deltanet_keys(GgufMetadata& meta, const ModelConfig& c, const std::string& a) {
  const DeltaNetConfig& d = c.deltanet;
  meta.add_u32(a + "ssm.conv_kernel", d.conv_kernel);
  meta.add_u32(a + "ssm.state_size", d.k_head_dim);
  meta.add_u32(a + "ssm.group_count", d.num_k_heads);
  meta.add_u32(a + "ssm.time_step_rank", d.num_v_heads);
  meta.add_u32(a + "ssm.inner_size", d.value_dim());
  meta.add_u32(a + "full_attention_interval", attention_interval(c));
  const int pairs = c.rope_dims() / 2;
  const int part = (pairs + 2) / 3;
  meta.add_numbers(a + "rope.dimension_sections", GgufType::Int32,
                   std::vector<int32_t>{part, part, pairs - 2 * part, 0});
  if (c.shared_expert_intermediate_size > 0)
    meta.add_u32(a + "expert_shared_feed_forward_length", c.shared_expert_intermediate_size);
}

void add_architecture_keys(GgufMetadata& meta, const Model& model, const FileLayout& layout) {
  const ModelConfig& c = model.config;
  const std::string a = layout.gguf_arch + ".";
  meta.add_u32(a + "context_length", c.max_position_embeddings);
  meta.add_u32(a + "embedding_length", c.hidden_size);
  meta.add_u32(a + "block_count", c.num_layers);
  meta.add_u32(a + "feed_forward_length", c.intermediate_size);
  meta.add_u32(a + "attention.head_count", c.num_heads);
  meta.add_u32(a + "attention.head_count_kv", c.num_kv_heads);
  meta.add_u32(a + "attention.key_length", c.head_dim);
  meta.add_u32(a + "attention.value_length", c.head_dim);
  meta.add_f32(a + "attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  meta.add_f32(a + "rope.freq_base", c.rope_theta);
  meta.add_u32(a + "rope.dimension_count", c.rope_dims());
  meta.add_u32(a + "vocab_size", c.vocab_size);
  if (c.rope_scaling.type == RopeScaling::Type::Linear) {
    meta.add_string(a + "rope.scaling.type", "linear");
    meta.add_f32(a + "rope.scaling.factor", c.rope_scaling.factor);
  }
  if (c.rope_scaling.type == RopeScaling::Type::Yarn) add_yarn_keys(meta, c.rope_scaling, a);
  if (c.is_moe()) add_expert_keys(meta, c, layout);
  if (c.is_hybrid()) add_deltanet_keys(meta, c, a);
  const Architecture& file_arch = *layout.file_arch;
  if (file_arch.window_pattern != WindowPattern::AllLayers)
    meta.add_u32(a + "attention.sliding_window", c.sliding_window);
  if (file_arch.window_pattern == WindowPattern::Ignored)  // Phi-3's converter writes it
    meta.add_u32(a + "rope.scaling.original_context_length", c.max_position_embeddings);
  if (const float local = local_rope_theta(c); local > 0.0f)
    meta.add_f32(a + "rope.freq_base_swa", local);
  if (c.attn_logit_softcap > 0.0f) meta.add_f32(a + "attn_logit_softcapping", c.attn_logit_softcap);
  if (c.final_logit_softcap > 0.0f)
    meta.add_f32(a + "final_logit_softcapping", c.final_logit_softcap);
}

void add_tokenizer_keys(GgufMetadata& meta, const ModelConfig& c) {
  const SyntheticVocab vocab = make_synthetic_vocab(c.vocab_size, c.bos_token_id, c.eos_token_id);
  meta.add_string("tokenizer.ggml.model", "llama");
  meta.add_string("tokenizer.ggml.pre", "default");
  meta.add_strings("tokenizer.ggml.tokens", vocab.tokens);
  meta.add_numbers("tokenizer.ggml.scores", GgufType::Float32, vocab.scores);
  meta.add_numbers("tokenizer.ggml.token_type", GgufType::Int32, vocab.token_types);
  meta.add_u32("tokenizer.ggml.unknown_token_id", vocab.unk_id);
  meta.add_u32("tokenizer.ggml.bos_token_id", vocab.bos_id);
  meta.add_u32("tokenizer.ggml.eos_token_id", vocab.eos_id);
  meta.add_bool("tokenizer.ggml.add_bos_token", true);
  meta.add_bool("tokenizer.ggml.add_eos_token", false);
}

size_t aligned(size_t n) {
  return (n + kAlignment - 1) / kAlignment * kAlignment;
}

// The header: magic, version, counts, metadata and the tensor directory with aligned offsets.
std::string file_header(const GgufMetadata& meta, const std::vector<OutputTensor>& tensors) {
  std::string out = "GGUF";
  const auto put = [&out](auto value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
  };
  put(kGgufVersion);
  put(static_cast<uint64_t>(tensors.size()));
  put(meta.num_keys());
  out += meta.bytes();
  uint64_t offset = 0;
  for (const OutputTensor& t : tensors) {
    put(static_cast<uint64_t>(t.name.size()));
    out += t.name;
    put(static_cast<uint32_t>(t.shape.size()));
    for (auto d = t.shape.rbegin(); d != t.shape.rend(); ++d) put(static_cast<uint64_t>(*d));
    put(dtype_traits(t.dtype).ggml_type);
    put(offset);
    offset = aligned(offset + t.num_bytes());
  }
  return out;
}

// A file written under a temporary name and renamed into place by commit(); removed unless
// committed. Every write is checked, so a full disk is an Error naming the file.
class AtomicFile {
 public:
  explicit AtomicFile(const std::string& path)
      : path_(path), temp_path_(str_cat(path, ".tmp-", ::getpid())) {
    file_ = std::fopen(temp_path_.c_str(), "wb");
    if (!file_) fail("cannot write ", path_, ": ", std::strerror(errno));
  }
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(temp_path_.c_str());
  }

  void write(const void* data, size_t num_bytes) {
    if (num_bytes > 0 && std::fwrite(data, 1, num_bytes, file_) != num_bytes) fail_write();
    written_ += num_bytes;
  }
  void pad_to(size_t alignment) {
    static constexpr char kZeros[kAlignment] = {};
    write(kZeros, (alignment - written_ % alignment) % alignment);
  }
  void commit() {
    if (std::fflush(file_) != 0) fail_write();
    std::FILE* file = file_;
    file_ = nullptr;
    if (std::fclose(file) != 0) fail_write();
    if (std::rename(temp_path_.c_str(), path_.c_str()) != 0)
      fail("cannot write ", path_, ": renaming ", temp_path_, ": ", std::strerror(errno));
    committed_ = true;
  }

 private:
  [[noreturn]] void fail_write() const {
    fail("cannot write ", path_, ": ", std::strerror(errno), " after ", written_,
         " bytes (is the disk full?)");
  }

  std::string path_, temp_path_;
  std::FILE* file_ = nullptr;
  size_t written_ = 0;
  bool committed_ = false;
};

}  // namespace

void write_gguf_model(const Model& model, const std::string& path) {
  const ModelConfig& c = model.config;
  FileLayout layout;
  layout.arch = &architecture_of(c);
  layout.gguf_arch = gguf_architecture_name(*layout.arch);
  layout.file_arch = find_gguf_architecture(layout.gguf_arch, c.is_moe());
  const bool file_interleaved = layout.file_arch->gguf_rope_interleaved;
  layout.permute_qk = file_interleaved != (c.rope_layout == RopeLayout::Interleaved);
  layout.to_interleaved = file_interleaved;
  layout.norm_offset = c.norm_weight_offset;
  check_llama_cpp_rules(model, layout);
  check_derived_options(model, layout);

  GgufMetadata meta;
  meta.add_string("general.architecture", layout.gguf_arch);
  meta.add_string("general.name", model.path);
  meta.add_u32("general.quantization_version", 2);  // ggml's block formats as of 2023
  add_architecture_keys(meta, model, layout);
  add_tokenizer_keys(meta, c);
  const std::vector<OutputTensor> tensors = file_tensors(model, layout);

  AtomicFile file(path);
  const std::string header = file_header(meta, tensors);
  file.write(header.data(), header.size());
  file.pad_to(kAlignment);
  for (const OutputTensor& t : tensors) {
    if (!t.values.empty()) {
      file.write(t.values.data(), t.values.size() * sizeof(float));
    } else {
      for (const auto& piece : t.pieces) file.write(piece.data(), piece.size());
    }
    file.pad_to(kAlignment);
  }
  file.commit();
}

}  // namespace sluice
