#include "engine/model/llama2c_reader.h"

#include <cstring>
#include <limits>

#include "engine/core/byte_reader.h"
#include "engine/core/error.h"
#include "engine/model/architecture.h"

namespace sluice {

namespace {

struct Header {
  int32_t dim, hidden_dim, num_layers, num_heads, num_kv_heads, vocab_size, seq_len;
};

constexpr size_t kHeaderBytes = 7 * sizeof(int32_t);

Header read_header(const MappedFile& file) {
  ByteReader in(file.data(), file.size(), file.path());
  Header h{};
  h.dim = in.read<int32_t>("header dim");
  h.hidden_dim = in.read<int32_t>("header hidden_dim");
  h.num_layers = in.read<int32_t>("header n_layers");
  h.num_heads = in.read<int32_t>("header n_heads");
  h.num_kv_heads = in.read<int32_t>("header n_kv_heads");
  h.vocab_size = in.read<int32_t>("header vocab_size");
  h.seq_len = in.read<int32_t>("header seq_len");
  return h;
}

// a * b + c without overflow; false when the result would not fit.
bool multiply_add(uint64_t a, uint64_t b, uint64_t& sum) {
  uint64_t product = 0;
  return !__builtin_mul_overflow(a, b, &product) && !__builtin_add_overflow(sum, product, &sum);
}

// Bytes of fp32 weights the header implies, or 0 if a field is out of range or the size
// overflows (a damaged header must not wrap around to a plausible size).
uint64_t expected_bytes(const Header& h) {
  const int64_t vocab = h.vocab_size < 0 ? -int64_t{h.vocab_size} : h.vocab_size;
  if (vocab > std::numeric_limits<int32_t>::max() || h.dim <= 0 || h.hidden_dim <= 0 ||
      h.num_layers <= 0 || h.num_heads <= 0 || h.num_kv_heads <= 0 || vocab <= 0 ||
      h.seq_len <= 0 || h.dim % h.num_heads != 0) {
    return 0;
  }
  const uint64_t head_dim = static_cast<uint64_t>(h.dim / h.num_heads);
  const uint64_t dim = static_cast<uint64_t>(h.dim), hidden = static_cast<uint64_t>(h.hidden_dim);
  const uint64_t layers = static_cast<uint64_t>(h.num_layers);
  uint64_t kv_dim = 0, layer_floats = 2 * dim;  // the two norms
  bool fits = multiply_add(head_dim, static_cast<uint64_t>(h.num_kv_heads), kv_dim);
  fits = fits && multiply_add(2 * dim, dim, layer_floats);                 // wq, wo
  fits = fits && multiply_add(2 * dim, kv_dim, layer_floats);              // wk, wv
  fits = fits && multiply_add(3 * dim, hidden, layer_floats);              // w1, w2, w3
  uint64_t floats = dim;                                                   // final norm
  fits = fits && multiply_add(static_cast<uint64_t>(vocab), dim, floats);  // token embedding
  fits = fits && multiply_add(layers, layer_floats, floats);
  fits = fits && multiply_add(static_cast<uint64_t>(h.seq_len), head_dim, floats);  // RoPE tables
  if (h.vocab_size < 0) fits = fits && multiply_add(static_cast<uint64_t>(vocab), dim, floats);
  uint64_t bytes = kHeaderBytes;
  fits = fits && multiply_add(floats, 4, bytes);
  return fits ? bytes : 0;
}

ConfigKeys llama2c_keys() {
  ConfigKeys keys;
  keys.hidden_size = "header dim";
  keys.intermediate_size = "header hidden_dim";
  keys.num_layers = "header n_layers";
  keys.num_heads = "header n_heads";
  keys.num_kv_heads = "header n_kv_heads";
  keys.head_dim = "head size (dim / n_heads)";
  keys.vocab_size = "header vocab_size";
  keys.max_position_embeddings = "header seq_len";
  return keys;
}

}  // namespace

Llama2cCheckpoint read_llama2c(const std::string& path) {
  Llama2cCheckpoint checkpoint;
  checkpoint.file = MappedFile::open(path);
  const MappedFile& file = *checkpoint.file;
  const Header h = read_header(file);
  const uint64_t expected = expected_bytes(h);
  if (expected == 0) {
    fail(path, ": not a llama2.c checkpoint: header (dim ", h.dim, ", hidden_dim ", h.hidden_dim,
         ", n_layers ", h.num_layers, ", n_heads ", h.num_heads, ", n_kv_heads ", h.num_kv_heads,
         ", vocab_size ", h.vocab_size, ", seq_len ", h.seq_len,
         ") has a non-positive or inconsistent field, or implies a size that overflows");
  }
  if (file.size() != expected) {
    fail(path, ": the header (dim ", h.dim, ", ", h.num_layers, " layers, vocab ", h.vocab_size,
         ") implies ", expected, " bytes but the file has ", file.size(),
         file.size() < expected ? "; it is truncated" : "");
  }

  ModelConfig& c = checkpoint.config;
  c.architecture = "llama";
  c.hidden_size = h.dim;
  c.intermediate_size = h.hidden_dim;
  c.num_layers = h.num_layers;
  c.num_heads = h.num_heads;
  c.num_kv_heads = h.num_kv_heads;
  c.head_dim = h.dim / h.num_heads;
  c.vocab_size = h.vocab_size < 0 ? -h.vocab_size : h.vocab_size;
  c.max_position_embeddings = h.seq_len;
  c.rms_norm_eps = 1e-5f;
  c.rope_theta = 10000.0f;
  c.rope_layout = RopeLayout::Interleaved;
  c.tie_word_embeddings = h.vocab_size > 0;
  c.bos_token_id = 1;
  c.eos_token_id = 2;
  // llama2.c's run.c ends generation when the model emits BOS: its training data separates
  // documents with BOS, so a generated BOS starts a new, unrelated story.
  c.extra_eos_token_ids = {1};
  apply_architecture(*find_gguf_architecture("llama"), c);
  c.validate(path, llama2c_keys());  // before a tensor is named for each of n_layers layers

  // Walk the fixed layout; stacked per-layer tensors are split into per-layer views.
  const uint8_t* cursor = file.data() + kHeaderBytes;
  auto take = [&](const std::string& name, std::vector<int64_t> shape) {
    TensorEntry entry;
    entry.tensor.name = name;
    entry.tensor.dtype = DType::F32;
    entry.tensor.shape = std::move(shape);
    entry.tensor.data = cursor;
    entry.tensor.num_bytes = static_cast<size_t>(entry.tensor.num_elements()) * 4;
    entry.type_name = "F32";
    entry.file = path;
    cursor += entry.tensor.num_bytes;
    checkpoint.tensors.add(std::move(entry));
  };
  auto take_layers = [&](const std::string& suffix, std::vector<int64_t> shape) {
    for (int l = 0; l < c.num_layers; ++l) take(str_cat("blk.", l, ".", suffix), shape);
  };
  const int64_t dim = c.hidden_size, hidden = c.intermediate_size, kv = c.kv_size(), q = c.q_size();
  take("token_embd.weight", {c.vocab_size, dim});
  take_layers("attn_norm.weight", {dim});
  take_layers("attn_q.weight", {q, dim});
  take_layers("attn_k.weight", {kv, dim});
  take_layers("attn_v.weight", {kv, dim});
  take_layers("attn_output.weight", {dim, q});
  take_layers("ffn_norm.weight", {dim});
  take_layers("ffn_gate.weight", {hidden, dim});  // w1
  take_layers("ffn_down.weight", {dim, hidden});  // w2
  take_layers("ffn_up.weight", {hidden, dim});    // w3
  take("output_norm.weight", {dim});
  cursor += static_cast<size_t>(h.seq_len) * c.head_dim * 4;  // legacy RoPE tables, unused
  if (!c.tie_word_embeddings) take("output.weight", {c.vocab_size, dim});
  return checkpoint;
}

bool is_llama2c_file(const std::string& path) {
  try {
    auto file = MappedFile::open(path);
    if (file->size() < kHeaderBytes) return false;
    return expected_bytes(read_header(*file)) == file->size();
  } catch (const Error&) {
    return false;
  }
}

}  // namespace sluice
