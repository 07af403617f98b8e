// load_model: format detection, role assignment by tensor name, and the page-in pass with
// progress and cancellation. The per-format readers validate the containers; this file checks
// that the tensors agree with the configuration.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <set>
#include <span>

#include "engine/core/dtype.h"
#include "engine/core/error.h"
#include "engine/model/architecture.h"
#include "engine/model/gguf_config.h"
#include "engine/model/gguf_reader.h"
#include "engine/model/hf_config.h"
#include "engine/model/llama2c_reader.h"
#include "engine/model/model.h"
#include "engine/model/openai_mxfp4_experts.h"
#include "engine/model/safetensors_reader.h"

namespace sluice {

namespace {

namespace fs = std::filesystem;

const char* layer_prefix(NameScheme scheme) {
  return scheme == NameScheme::HuggingFace ? "model.layers." : "blk.";
}

// The layer a tensor named "<layer_prefix><index>.<rest>" belongs to, or -1 for a tensor
// outside the layers. An index too large for int64 counts as past every layer.
int64_t layer_index_of(const std::string& name, std::string_view layer_prefix) {
  if (!name.starts_with(layer_prefix)) return -1;
  const char* begin = name.data() + layer_prefix.size();
  const char* end = name.data() + name.size();
  int64_t index = 0;
  const auto [stop, error] = std::from_chars(begin, end, index);
  if (stop == begin || stop == end || *stop != '.') return -1;
  return error == std::errc::result_out_of_range ? std::numeric_limits<int64_t>::max() : index;
}

// Refuses a layer count the tensors do not bear out, before anything is sized by it: layers the
// configuration declares but the files lack, and layer tensors past the declared count (which
// would otherwise be ignored, running a different model than the files hold). `layer_count`
// names the file and key that declared it, e.g. "model.gguf: llama.block_count".
void check_layer_count(const TensorDirectory& tensors, const ModelConfig& c, NameScheme scheme,
                       const std::string& layer_count) {
  int64_t num_layers_in_files = 0;
  const TensorEntry* first_unused = nullptr;
  size_t num_unused = 0;
  for (const auto& [name, entry] : tensors.entries()) {
    const int64_t layer = layer_index_of(name, layer_prefix(scheme));
    if (layer < 0) continue;
    num_layers_in_files = std::max(num_layers_in_files, layer + 1);
    if (layer >= c.num_layers) {
      if (!first_unused) first_unused = &entry;
      ++num_unused;
    }
  }
  if (first_unused) {
    fail(first_unused->file, ": tensor ", first_unused->tensor.name,
         num_unused > 1 ? str_cat(" (and ", num_unused - 1, " more)") : std::string(),
         " lies past the ", c.num_layers, " layers that ", layer_count,
         " declares; the files hold more layers than the configuration says");
  }
  if (num_layers_in_files < c.num_layers) {
    fail(layer_count, " is ", c.num_layers, " but the model files hold tensors of only ",
         num_layers_in_files, " layers (no tensor named ", layer_prefix(scheme),
         num_layers_in_files, ".*)");
  }
}

// Rows [first, first + count) of a matrix, as a view of the same data (a fused tensor's part).
WeightTensor row_range(const WeightTensor& t, int64_t first, int64_t count, const char* part) {
  WeightTensor view = t;
  view.name = str_cat(t.name, " (", part, ")");
  view.shape = {count, t.cols()};
  view.data = t.row(first);
  view.num_bytes = static_cast<size_t>(count) * t.row_bytes();
  return view;
}

// Qwen3.5-MoE's fused experts of a Hugging Face folder: gate_up_proj [E, 2F, H] holds expert e's
// gate in its first F rows and up in the last F; down_proj [E, H, F] stacks the down matrices.
std::vector<WeightTensor> fused_half_experts(const TensorDirectory& tensors, const ModelConfig& c,
                                             WeightRole role, int layer,
                                             std::set<std::string>& used) {
  const int64_t ffn = c.expert_intermediate_size;
  const int64_t hidden = c.hidden_size;
  const std::string prefix = str_cat("model.layers.", layer, ".mlp.experts.");
  std::vector<WeightTensor> experts;
  if (role == WeightRole::DownExps) {
    const std::string name = prefix + "down_proj";
    used.insert(name);
    const WeightTensor stack = tensors.require(name, {c.num_experts, hidden, ffn});
    for (int e = 0; e < c.num_experts; ++e) experts.push_back(expert_slice(stack, e));
    return experts;
  }
  const std::string name = prefix + "gate_up_proj";
  used.insert(name);
  WeightTensor stack = tensors.require(name, {c.num_experts, 2 * ffn, hidden});
  stack.shape = {c.num_experts * 2 * ffn, hidden};
  const bool up = role == WeightRole::UpExps;
  for (int e = 0; e < c.num_experts; ++e)
    experts.push_back(row_range(stack, e * 2 * ffn + (up ? ffn : 0), ffn, up ? "up" : "gate"));
  return experts;
}

// A Hugging Face Gated DeltaNet's tensors that differ from the role table's form: the conv taps
// [conv_dim, 1, kernel] (the 1 dropped), A_log (converted to a = -exp(A_log) in float32, as
// llama.cpp's converter stores ssm_a). Returns false for every other role.
bool take_hf_deltanet(const TensorDirectory& tensors, const ModelConfig& c, WeightRole role,
                      const std::string& name, WeightTensor& out,
                      std::vector<std::vector<uint8_t>>* owned) {
  if (role == WeightRole::SsmConv) {
    const int64_t channels = c.deltanet.conv_dim();
    out = tensors.require(name, {channels, 1, c.deltanet.conv_kernel});
    out.shape = {channels, c.deltanet.conv_kernel};
    return true;
  }
  if (role != WeightRole::SsmA) return false;
  if (!owned) fail(name, ": cannot convert A_log here");
  const WeightTensor a_log = tensors.require(name, {c.deltanet.num_v_heads});
  std::vector<float> values(static_cast<size_t>(a_log.num_elements()));
  dequantize_row(a_log.dtype, a_log.data, values.data(), a_log.num_elements());
  for (float& v : values) v = -std::exp(v);
  std::vector<uint8_t>& bytes = owned->emplace_back(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  out = a_log;
  out.name = name + " (as -exp)";
  out.dtype = DType::F32;
  out.data = bytes.data();
  out.num_bytes = bytes.size();
  return true;
}

// Takes every tensor the model definition needs by the weight-role table, checking type and
// shape, splits fused tensors and expert stacks, and refuses tensors the definition would leave
// unused.
// `owned` keeps weights converted at load (gpt-oss's openai MXFP4 experts).
ModelWeights assign_weights(const TensorDirectory& tensors, const ModelConfig& c, NameScheme scheme,
                            const std::string& source,
                            std::vector<std::vector<uint8_t>>* owned = nullptr) {
  const Architecture& arch = architecture_of(c);
  std::set<std::string> used;
  auto take = [&](WeightRole role, int layer) {
    const std::string name = tensor_name(role, arch, scheme, layer);
    used.insert(name);
    std::vector<int64_t> shape = weight_shape(role, c);
    // llama-quantize writes the shared expert's one-row gate as a vector [hidden].
    const TensorEntry* entry = tensors.find(name);
    if (role == WeightRole::ShexpRouter && entry && entry->tensor.shape.size() == 1) {
      WeightTensor t = tensors.require(name, {shape[1]});
      t.shape = shape;
      return t;
    }
    return tensors.require(name, shape);
  };
  // An expert role: the stacked tensor sliced (GGUF, and HF files that stack them), or one tensor
  // per expert (HF).
  auto take_experts = [&](WeightRole role, int layer) {
    std::vector<WeightTensor> experts;
    if (scheme == NameScheme::HuggingFace && arch.hf_experts == HfExperts::FusedGateUpHalves &&
        (role == WeightRole::GateExps || role == WeightRole::UpExps ||
         role == WeightRole::DownExps)) {
      return fused_half_experts(tensors, c, role, layer, used);
    }
    const std::string stacked = tensor_name(role, arch, NameScheme::Gguf, layer);
    if (scheme == NameScheme::Gguf) {
      used.insert(stacked);
      const WeightTensor stack = tensors.require(stacked, weight_shape(role, c));
      for (int e = 0; e < c.num_experts; ++e) experts.push_back(expert_slice(stack, e));
      return experts;
    }
    for (int e = 0; e < c.num_experts; ++e) {
      const std::string name = tensor_name(role, arch, scheme, layer, e);
      used.insert(name);
      experts.push_back(tensors.require(name, expert_slice_shape(role, c)));
    }
    return experts;
  };
  ModelWeights w;
  w.layers.resize(static_cast<size_t>(c.num_layers));
  w.experts.resize(static_cast<size_t>(c.num_layers));
  for (int l = 0; l < c.num_layers; ++l) {
    LayerWeights& layer = w.layers[static_cast<size_t>(l)];
    const bool openai_experts = c.is_moe() && scheme == NameScheme::HuggingFace &&
                                arch.hf_experts == HfExperts::FusedMxfp4 && owned;
    if (openai_experts)
      read_openai_mxfp4_experts(tensors, c, l, w.experts[static_cast<size_t>(l)], used, *owned);
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role) || !weight_role_in_files(role, arch, c, l)) continue;
      if (is_expert_role(role)) {
        if (openai_experts) continue;
        w.experts[static_cast<size_t>(l)][role] = take_experts(role, l);
        continue;
      }
      const std::span<const WeightRole> parts = fused_parts(role);
      if (scheme == NameScheme::HuggingFace && is_deltanet_role(role)) {
        const std::string name = tensor_name(role, arch, scheme, l);
        if (take_hf_deltanet(tensors, c, role, name, layer[role], owned)) {
          used.insert(name);
          continue;
        }
      }
      if (parts.empty()) {
        layer[role] = take(role, l);
        continue;
      }
      const WeightTensor fused = take(role, l);
      int64_t first_row = 0;
      for (const WeightRole part : parts) {
        const int64_t num_rows = weight_shape(part, c)[0];
        layer[part] = row_range(fused, first_row, num_rows, weight_role_name(part));
        first_row += num_rows;
      }
    }
  }
  w.token_embedding = take(WeightRole::TokenEmbedding, 0);
  w.final_norm = take(WeightRole::FinalNorm, 0);
  const std::string head_name = tensor_name(WeightRole::LmHead, arch, scheme, 0);
  if (!c.tie_word_embeddings || tensors.contains(head_name)) {
    // A separate head is used whenever the files carry one.
    w.lm_head = take(WeightRole::LmHead, 0);
  } else {
    w.lm_head = w.token_embedding;
  }
  if (const auto factors = tensors.optional("rope_freqs.weight", {c.head_dim / 2})) {
    if (factors->dtype != DType::F32)
      fail("tensor rope_freqs.weight must be F32, not ", dtype_name(factors->dtype));
    w.rope_freq_factors = *factors;
    used.insert("rope_freqs.weight");
  }
  for (const char* name : {"rope_factors_long.weight", "rope_factors_short.weight"}) {
    if (c.rope_scaling.type == RopeScaling::Type::LongRope) used.insert(name);  // read as config
  }
  for (const auto& [name, entry] : tensors.entries()) {
    if (used.count(name) || name.find("rotary_emb.inv_freq") != std::string::npos) continue;
    fail(entry.file, ": tensor ", name, " has no role in the ", c.architecture,
         " model definition (", source,
         " names that architecture); the file holds a different or unsupported architecture");
  }
  return w;
}

// Tensors the model files carry that Sluice would silently ignore but that change the math:
// output and MLP biases of an architecture that has none.
void reject_unsupported_tensors(const TensorDirectory& tensors, const ModelConfig& c) {
  for (const auto& [name, entry] : tensors.entries()) {
    const bool output_bias = name.find("o_proj.bias") != std::string::npos ||
                             name.find("attn_output.bias") != std::string::npos;
    const bool mlp_bias = name.find("mlp.") != std::string::npos && name.ends_with(".bias");
    if ((output_bias && !c.has_output_bias) || (mlp_bias && !c.moe_biases))
      fail(entry.file, ": tensor ", name, ": output or MLP biases are not supported");
  }
}

// The tokenizer beside a llama2.c checkpoint: tokenizer.bin, tok<vocab>.bin, tokenizer.model
// or tok<vocab>.model. Throws Error listing where it looked.
std::string find_llama2c_tokenizer(const std::string& checkpoint_path, int vocab_size) {
  const fs::path dir = fs::path(checkpoint_path).parent_path();
  const std::string vocab = std::to_string(vocab_size);
  for (const std::string& name : {std::string("tokenizer.bin"), "tok" + vocab + ".bin",
                                  std::string("tokenizer.model"), "tok" + vocab + ".model"}) {
    if (fs::exists(dir / name)) return (dir / name).string();
  }
  fail(checkpoint_path,
       ": no tokenizer found beside the llama2.c checkpoint (looked for tokenizer.bin, tok", vocab,
       ".bin, tokenizer.model, tok", vocab, ".model in ", dir.string(), "); pass --tokenizer");
}

void load_hf(Model& model) {
  const fs::path dir(model.path);
  const fs::path config_path = dir / "config.json";
  if (!fs::exists(config_path))
    fail(model.path, ": not a Hugging Face model directory (no config.json)");
  model.config = read_hf_config(config_path.string());
  TensorDirectory tensors;
  if (fs::exists(dir / "model.safetensors.index.json")) {
    model.files =
        read_safetensors_sharded((dir / "model.safetensors.index.json").string(), tensors);
  } else if (fs::exists(dir / "model.safetensors")) {
    model.files.push_back(read_safetensors((dir / "model.safetensors").string(), tensors));
  } else {
    fail(model.path,
         ": no model.safetensors or model.safetensors.index.json (PyTorch .bin checkpoints are not "
         "supported)");
  }
  if (hf_config_is_multimodal(config_path.string())) {
    // The language model of a multimodal checkpoint; its vision tower and multi-token-prediction
    // head are not run (text in, text out).
    tensors.rename_prefix("model.language_model.", "model.", {"model.visual.", "mtp."});
  }
  reject_unsupported_tensors(tensors, model.config);
  check_layer_count(tensors, model.config, NameScheme::HuggingFace,
                    str_cat(config_path.string(), ": num_hidden_layers"));
  model.weights =
      assign_weights(tensors, model.config, NameScheme::HuggingFace,
                     str_cat(config_path.string(), ": model_type"), &model.owned_storage);
  model.chat_template = read_hf_chat_template((dir / "tokenizer_config.json").string());
  model.chat_template_origin = str_cat((dir / "tokenizer_config.json").string(), ": chat_template");
  if (model.tokenizer_path.empty()) model.tokenizer_path = model.path;
}

void load_gguf(Model& model) {
  auto gguf = GgufFile::open(model.path);
  model.config = read_gguf_config(*gguf);
  TensorDirectory tensors;
  for (const auto& info : gguf->tensors()) {
    TensorEntry entry;
    entry.tensor.name = info.name;
    entry.tensor.dtype = info.dtype.value_or(DType::F32);
    entry.tensor.shape = info.shape;
    entry.tensor.data = info.data;
    entry.tensor.num_bytes = info.num_bytes;
    entry.dtype_supported = info.dtype.has_value();
    entry.type_name = info.type_name;
    entry.file = model.path;
    tensors.add(std::move(entry));
  }
  reject_unsupported_tensors(tensors, model.config);
  const std::string arch_name = gguf->get_string("general.architecture");
  check_layer_count(tensors, model.config, NameScheme::Gguf,
                    str_cat(model.path, ": ", gguf_config_keys(arch_name).num_layers));
  model.weights = assign_weights(tensors, model.config, NameScheme::Gguf,
                                 str_cat(model.path, ": general.architecture"));
  model.chat_template = gguf->get_string_or("tokenizer.chat_template", "");
  model.chat_template_origin =
      str_cat(model.path, ": built-in chat template (tokenizer.chat_template)");
  model.files.push_back(gguf->file());
  if (model.tokenizer_path.empty()) model.tokenizer_path = model.path;
}

void load_llama2c(Model& model) {
  Llama2cCheckpoint checkpoint = read_llama2c(model.path);
  model.config = checkpoint.config;  // validated by read_llama2c
  model.weights = assign_weights(checkpoint.tensors, model.config, NameScheme::Gguf, model.path);
  model.files.push_back(checkpoint.file);
  if (model.tokenizer_path.empty())
    model.tokenizer_path = find_llama2c_tokenizer(model.path, model.config.vocab_size);
}

std::vector<const WeightTensor*> all_tensors(const ModelWeights& w) {
  std::vector<const WeightTensor*> out = {&w.token_embedding};
  for (const auto& l : w.layers) {
    for (const WeightRole role : all_weight_roles()) {
      if (is_layer_role(role) && !l[role].empty()) out.push_back(&l[role]);
    }
  }
  for (const auto& l : w.experts) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role)) continue;
      for (const WeightTensor& t : l[role]) out.push_back(&t);
    }
  }
  out.push_back(&w.final_norm);
  if (w.lm_head.data != w.token_embedding.data) out.push_back(&w.lm_head);
  if (!w.rope_freq_factors.empty()) out.push_back(&w.rope_freq_factors);
  return out;
}

bool report(const LoadOptions& options, double fraction, const std::string& stage) {
  return !options.on_progress || options.on_progress(LoadProgress{fraction, stage});
}

// Reads every page of every weight so the first forward pass does not stall on page faults,
// reporting progress by bytes and checking for cancellation between chunks.
void page_in(const Model& model, const LoadOptions& options) {
  const auto tensors = all_tensors(model.weights);
  size_t total = 0;
  for (const auto* t : tensors) total += t->num_bytes;
  constexpr size_t kChunk = size_t{64} << 20;
  constexpr size_t kPage = 4096;
  size_t done = 0;
  volatile uint8_t sink = 0;
  for (const auto* t : tensors) {
    for (size_t offset = 0; offset < t->num_bytes; offset += kChunk) {
      const size_t end = std::min(t->num_bytes, offset + kChunk);
      for (size_t i = offset; i < end; i += kPage) sink = sink + t->data[i];
      done += end - offset;
      const double fraction =
          0.1 + 0.9 * static_cast<double>(done) / static_cast<double>(std::max<size_t>(total, 1));
      if (!report(options, fraction, "reading " + t->name)) throw Cancelled();
    }
  }
}

}  // namespace

size_t Model::weight_bytes() const {
  size_t total = 0;
  for (const auto* t : all_tensors(weights)) total += t->num_bytes;
  return total;
}

int64_t Model::parameter_count() const {
  int64_t total = 0;
  for (const auto* t : all_tensors(weights)) total += t->num_elements();
  return total;
}

int64_t Model::active_parameter_count() const {
  int64_t experts = 0;
  for (const auto& layer : weights.experts) {
    for (const WeightRole role : all_weight_roles()) {
      if (!is_layer_role(role)) continue;
      for (const WeightTensor& t : layer[role]) experts += t.num_elements();
    }
  }
  if (experts == 0) return parameter_count();
  const int64_t unused =
      experts / config.num_experts * (config.num_experts - config.num_experts_used);
  return parameter_count() - unused;
}

std::string Model::format_name() const {
  switch (format) {
    case ModelFormat::HuggingFace:
      return "safetensors";
    case ModelFormat::Gguf:
      return "gguf";
    case ModelFormat::Llama2c:
      return "llama2c";
    case ModelFormat::Dummy:
      return "dummy";
  }
  return "?";
}

std::string Model::weight_dtypes() const {
  std::set<std::string> names;
  for (const auto* t : all_tensors(weights)) names.insert(std::string(dtype_name(t->dtype)));
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "+") + n;
  return out;
}

std::string locate_tokenizer(const std::string& model_path) {
  if (!fs::exists(model_path)) fail(model_path, ": no such file or directory");
  if (fs::is_directory(model_path) || is_gguf_file(model_path) ||
      fs::path(model_path).extension() == ".gguf") {
    return model_path;
  }
  return find_llama2c_tokenizer(model_path, read_llama2c(model_path).config.vocab_size);
}

std::unique_ptr<Model> load_model(const std::string& path, const LoadOptions& options,
                                  const std::string& tokenizer_path) {
  if (!fs::exists(path)) fail(path, ": no such file or directory");
  auto model = std::make_unique<Model>();
  model->path = path;
  model->tokenizer_path = tokenizer_path;
  if (!report(options, 0.0, "reading " + path)) throw Cancelled();
  if (fs::is_directory(path)) {
    model->format = ModelFormat::HuggingFace;
    load_hf(*model);
  } else if (is_gguf_file(path) || fs::path(path).extension() == ".gguf") {
    model->format = ModelFormat::Gguf;
    load_gguf(*model);
  } else {
    model->format = ModelFormat::Llama2c;
    load_llama2c(*model);
  }
  if (!report(options, 0.1, "validated " + std::to_string(model->config.num_layers) + " layers"))
    throw Cancelled();
  if (options.prefault) page_in(*model, options);
  if (!report(options, 1.0, "loaded")) throw Cancelled();
  return model;
}

}  // namespace sluice
