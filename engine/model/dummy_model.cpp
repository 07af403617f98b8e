#include "engine/model/dummy_model.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <new>
#include <thread>
#include <vector>

#include "engine/core/error.h"
#include "engine/model/architecture.h"
#include "engine/core/system_memory.h"

namespace sluice {

namespace {

struct Preset {
  const char* name;
  int hidden, ffn, layers, heads, kv_heads, vocab, context;
  float rope_theta;
  bool qkv_bias, tied;
};

// Shapes from the models' published config.json files.
constexpr Preset kPresets[] = {
    {"stories15M", 288, 768, 6, 6, 6, 32000, 256, 10000.0f, false, true},
    {"stories110M", 768, 2048, 12, 12, 12, 32000, 1024, 10000.0f, false, true},
    {"llama-3.2-1b", 2048, 8192, 16, 32, 8, 128256, 131072, 500000.0f, false, true},
    {"qwen2.5-1.5b", 1536, 8960, 28, 12, 2, 151936, 32768, 1000000.0f, true, true},
    {"llama-2-7b", 4096, 11008, 32, 32, 32, 32000, 4096, 10000.0f, false, false},
    {"mistral-7b", 4096, 14336, 32, 32, 8, 32000, 32768, 1000000.0f, false, false},
    {"qwen2.5-7b", 3584, 18944, 28, 28, 4, 152064, 32768, 1000000.0f, true, false},
    {"llama-3-8b", 4096, 14336, 32, 32, 8, 128256, 8192, 500000.0f, false, false},
};

const Preset& find_preset(const std::string& name) {
  for (const auto& p : kPresets) {
    if (name == p.name) return p;
  }
  std::string names;
  for (const auto& p : kPresets) names += (names.empty() ? "" : ", ") + std::string(p.name);
  fail("unknown dummy model '", name, "' (known: ", names, ")");
}

// splitmix64: a counter-based generator, so any element can be drawn independently.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class WeightFactory {
 public:
  WeightFactory(Model& model, DType dtype, uint64_t seed)
      : model_(model), dtype_(dtype), seed_(seed) {}

  WeightTensor random(const std::string& name, std::vector<int64_t> shape) {
    return make(name, std::move(shape), false);
  }
  WeightTensor ones(const std::string& name, std::vector<int64_t> shape) {
    return make(name, std::move(shape), true);
  }

 private:
  WeightTensor make(const std::string& name, std::vector<int64_t> shape, bool is_ones) {
    WeightTensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dtype = is_ones ? DType::F32 : dtype_;
    const int64_t n = t.num_elements();
    if (dtype_traits(t.dtype).quantized)
      fail("dummy model: ", dtype_name(t.dtype), " weights are not supported");
    auto& storage = model_.owned_storage.emplace_back();
    try {
      storage.resize(dtype_num_bytes(t.dtype, n));
    } catch (const std::bad_alloc&) {
      fail("dummy model: cannot allocate ", dtype_num_bytes(t.dtype, n) >> 20, " MiB for ", name);
    }
    const uint64_t stream = mix(seed_ ^ mix(std::hash<std::string>{}(name)));
    uint8_t* data = storage.data();
    const DType dtype = t.dtype;
    // Each element is drawn from its own counter, so chunks fill in parallel with the same result
    // (an 8B model is 8e9 draws: minutes on one core).
    const auto fill = [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const float value =
            is_ones
                ? 1.0f
                : (static_cast<float>(mix(stream + static_cast<uint64_t>(i)) >> 40) / 16777216.0f -
                   0.5f) *
                      0.07f;
        write(dtype, data, i, value);
      }
    };
    const int64_t threads =
        std::clamp<int64_t>(std::thread::hardware_concurrency(), 1, std::max<int64_t>(1, n >> 20));
    std::vector<std::thread> workers;
    for (int64_t k = 1; k < threads; ++k)
      workers.emplace_back(fill, n * k / threads, n * (k + 1) / threads);
    fill(0, n / threads);
    for (auto& worker : workers) worker.join();
    t.data = storage.data();
    t.num_bytes = storage.size();
    return t;
  }

  static void write(DType dtype, uint8_t* data, int64_t i, float value) {
    switch (dtype) {
      case DType::F32:
        std::memcpy(data + 4 * i, &value, 4);
        return;
      case DType::F16: {
        const uint16_t h = f32_to_f16(value);
        std::memcpy(data + 2 * i, &h, 2);
        return;
      }
      case DType::BF16: {
        const uint16_t h = f32_to_bf16(value);
        std::memcpy(data + 2 * i, &h, 2);
        return;
      }
      default:
        return;  // quantized types are refused in make() before any thread starts
    }
  }

  Model& model_;
  DType dtype_;
  uint64_t seed_;
};

}  // namespace

std::vector<std::string> dummy_model_presets() {
  std::vector<std::string> out;
  for (const auto& p : kPresets) out.emplace_back(p.name);
  return out;
}

ModelConfig dummy_model_config(const std::string& preset) {
  const Preset& p = find_preset(preset);
  ModelConfig c;
  c.architecture = p.qkv_bias ? "qwen2" : "llama";
  c.hidden_size = p.hidden;
  c.intermediate_size = p.ffn;
  c.num_layers = p.layers;
  c.num_heads = p.heads;
  c.num_kv_heads = p.kv_heads;
  c.head_dim = p.hidden / p.heads;
  c.vocab_size = p.vocab;
  c.max_position_embeddings = p.context;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = p.rope_theta;
  c.rope_layout = RopeLayout::RotateHalf;
  c.tie_word_embeddings = p.tied;
  c.has_qkv_bias = p.qkv_bias;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  apply_architecture(*find_hf_architecture(c.architecture), c);
  c.validate("dummy model " + preset);
  return c;
}

std::unique_ptr<Model> make_dummy_model(const std::string& preset, DType dtype, uint64_t seed,
                                        int num_layers) {
  auto model = std::make_unique<Model>();
  model->path = "dummy:" + preset;
  model->format = ModelFormat::Dummy;
  model->config = dummy_model_config(preset);
  if (num_layers > 0) {
    model->config.num_layers = num_layers;
    apply_architecture(architecture_of(model->config), model->config);
  }
  const ModelConfig& c = model->config;
  const int64_t hidden = c.hidden_size, ffn = c.intermediate_size, q = c.q_size(), kv = c.kv_size();
  // Every matrix in dtype (norms are fp32 and small); refused up front rather than killed midway.
  const int64_t per_layer = (q + 2 * kv) * hidden + hidden * q + 3 * ffn * hidden + (c.has_qkv_bias ? q + 2 * kv : 0);
  const int64_t matrices = c.vocab_size * hidden * (c.tie_word_embeddings ? 1 : 2) + c.num_layers * per_layer;
  const size_t needed = dtype_num_bytes(dtype, matrices);
  const size_t available = available_system_memory_bytes();
  if (available > 0 && needed > available) {
    fail("dummy model ", preset, ": its ", dtype_name(dtype), " weights need ", needed >> 20, " MiB and ",
         available >> 20, " MiB of memory is available",
         dtype == DType::F32 ? "; try --dummy-dtype bf16 or a smaller preset" : "; try a smaller preset");
  }
  WeightFactory f(*model, dtype, seed);
  ModelWeights& w = model->weights;
  w.token_embedding = f.random("token_embedding", {c.vocab_size, hidden});
  for (int l = 0; l < c.num_layers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerWeights layer;
    layer.attn_norm = f.ones(p + "attn_norm", {hidden});
    layer.wq = f.random(p + "wq", {q, hidden});
    layer.wk = f.random(p + "wk", {kv, hidden});
    layer.wv = f.random(p + "wv", {kv, hidden});
    if (c.has_qkv_bias) {
      layer.bq = f.random(p + "bq", {q});
      layer.bk = f.random(p + "bk", {kv});
      layer.bv = f.random(p + "bv", {kv});
    }
    layer.wo = f.random(p + "wo", {hidden, q});
    layer.ffn_norm = f.ones(p + "ffn_norm", {hidden});
    layer.w_gate = f.random(p + "w_gate", {ffn, hidden});
    layer.w_up = f.random(p + "w_up", {ffn, hidden});
    layer.w_down = f.random(p + "w_down", {hidden, ffn});
    w.layers.push_back(std::move(layer));
  }
  w.final_norm = f.ones("final_norm", {hidden});
  w.lm_head =
      c.tie_word_embeddings ? w.token_embedding : f.random("lm_head", {c.vocab_size, hidden});
  return model;
}

}  // namespace sluice
