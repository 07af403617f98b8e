// Sizes and ids from headers and configs are checked against the file and sane maxima before
// anything is sized by them: hostile counts fail fast with an Error naming the key or tensor,
// under a memory cap that a gigabyte allocation would break (tests/support/memory_limit.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/model/model.h"
#include "engine/model/safetensors_reader.h"
#include "tests/support/gguf_builder.h"
#include "tests/support/memory_limit.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

// The shape of a tiny llama: hidden 8, 2 heads of 4, FFN 8, vocab 16, context 32.
struct TinyLlama {
  uint32_t block_count = 1;    // what the metadata declares
  int num_layers_in_file = 1;  // layers whose tensors the file holds
  uint32_t head_count = 2;
  bool has_rope_dimension_count = false;
};

std::string write_tiny_llama_gguf(const std::string& name, const TinyLlama& shape) {
  test::GgufBuilder gguf;
  gguf.add_string("general.architecture", "llama")
      .add_u32("llama.embedding_length", 8)
      .add_u32("llama.feed_forward_length", 8)
      .add_u32("llama.block_count", shape.block_count)
      .add_u32("llama.attention.head_count", shape.head_count)
      .add_u32("llama.context_length", 32)
      .add_u32("llama.vocab_size", 16)
      .add_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  if (shape.has_rope_dimension_count) gguf.add_u32("llama.rope.dimension_count", 4);
  const auto tensor = [&](const std::string& tensor_name, std::vector<int64_t> dims) {
    int64_t n = 1;
    for (const int64_t d : dims) n *= d;
    gguf.add_f32_tensor(tensor_name, dims, std::vector<float>(static_cast<size_t>(n), 0.5f));
  };
  tensor("token_embd.weight", {16, 8});
  for (int l = 0; l < shape.num_layers_in_file; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    tensor(p + "attn_norm.weight", {8});
    for (const char* w : {"attn_q.weight", "attn_k.weight", "attn_v.weight", "attn_output.weight",
                          "ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"}) {
      tensor(p + w, {8, 8});
    }
    tensor(p + "ffn_norm.weight", {8});
  }
  tensor("output_norm.weight", {8});
  const std::string path = test::make_temp_dir("tiny-gguf") + "/" + name;
  test::write_file(path, gguf.build());
  return path;
}

// A copy of the stories260K HF directory whose config.json a test may change.
std::string hf_dir_with_config(const std::string& name,
                               const std::function<void(nlohmann::json&)>& change) {
  const std::string dir = test::make_temp_dir(name);
  for (const auto& entry : fs::directory_iterator(test::shared_path("models/stories260K/hf"))) {
    fs::copy_file(entry.path(), fs::path(dir) / entry.path().filename());
  }
  auto config = nlohmann::json::parse(test::read_file(dir + "/config.json"));
  change(config);
  test::write_file(dir + "/config.json", config.dump());
  return dir;
}

TEST(ModelSizeChecks, TinyLlamaGgufLoads) {
  // The builder makes a valid model, so the refusals below come from the one field changed.
  const auto model = load_model(write_tiny_llama_gguf("ok.gguf", {}));
  EXPECT_EQ(model->config.num_layers, 1);
}

TEST(ModelSizeChecks, GgufBlockCountOfTenMillionIsRefusedBeforeAllocating) {
  const std::string path = write_tiny_llama_gguf("layers.gguf", {.block_count = 10'000'000});
  test::expect_error_within_memory_limit([&] { load_model(path); },
                                         {"layers.gguf", "llama.block_count", "10000000"});
}

TEST(ModelSizeChecks, HfNumHiddenLayersOfTenMillionIsRefusedBeforeAllocating) {
  const std::string dir = hf_dir_with_config(
      "hf-layers", [](nlohmann::json& c) { c["num_hidden_layers"] = 10'000'000; });
  test::expect_error_within_memory_limit([&] { load_model(dir); },
                                         {"config.json", "num_hidden_layers", "10000000"});
}

TEST(ModelSizeChecks, GgufBlockCountPastTheFilesLayersNamesTheKey) {
  const std::string path =
      write_tiny_llama_gguf("short.gguf", {.block_count = 3, .num_layers_in_file = 2});
  test::expect_error_within_memory_limit([&] { load_model(path); },
                                         {"short.gguf", "llama.block_count is 3", "only 2 layers"});
}

TEST(ModelSizeChecks, LayerTensorsPastTheDeclaredLayersAreNamed) {
  const std::string path =
      write_tiny_llama_gguf("extra.gguf", {.block_count = 1, .num_layers_in_file = 2});
  test::expect_error_within_memory_limit(
      [&] { load_model(path); }, {"extra.gguf", "blk.1.", "(and 8 more)", "llama.block_count"});

  const std::string dir =
      hf_dir_with_config("hf-fewer", [](nlohmann::json& c) { c["num_hidden_layers"] = 4; });
  test::expect_error_within_memory_limit(
      [&] { load_model(dir); }, {"model.safetensors", "model.layers.4.", "num_hidden_layers"});
}

TEST(ModelSizeChecks, HeadCountThatDoesNotDivideTheWidthNamesBothKeys) {
  const std::string path =
      write_tiny_llama_gguf("heads.gguf", {.head_count = 3, .has_rope_dimension_count = true});
  test::expect_error_within_memory_limit(
      [&] { load_model(path); },
      {"llama.embedding_length 8 is not divisible by llama.attention.head_count 3"});

  const std::string dir = hf_dir_with_config("hf-heads", [](nlohmann::json& c) {
    c["num_attention_heads"] = 7;
    c["num_key_value_heads"] = 7;
    c.erase("head_dim");  // then the head size is hidden_size / num_attention_heads
  });
  test::expect_error_within_memory_limit(
      [&] { load_model(dir); }, {"hidden_size 64 is not divisible by num_attention_heads 7"});
}

TEST(ModelSizeChecks, NegativeOrOutOfVocabSpecialIdsNameKeyAndFile) {
  const std::string negative =
      hf_dir_with_config("hf-eos-neg", [](nlohmann::json& c) { c["eos_token_id"] = -3; });
  test::expect_error_within_memory_limit([&] { load_model(negative); },
                                         {"config.json", "eos_token_id", "-3"});

  const std::string listed = hf_dir_with_config("hf-eos-list", [](nlohmann::json& c) {
    c["eos_token_id"] = nlohmann::json::array({2, 9999});
  });
  test::expect_error_within_memory_limit([&] { load_model(listed); },
                                         {"config.json", "eos_token_id", "9999"});

  const std::string bos =
      hf_dir_with_config("hf-bos-neg", [](nlohmann::json& c) { c["bos_token_id"] = -1; });
  test::expect_error_within_memory_limit([&] { load_model(bos); },
                                         {"config.json", "bos_token_id", "-1"});
}

TEST(ModelSizeChecks, GgufTensorWhoseByteCountWouldWrapIsRefused) {
  // 2^62 F32 elements are 2^64 bytes, which wrapped to a size of 0 that "fit" any file.
  const std::string bytes = test::GgufBuilder()
                                .add_f32_tensor("wrap.weight", {int64_t{1} << 22, int64_t{1} << 40},
                                                {}, /*offset_override=*/0)
                                .build();
  const std::string path = test::make_temp_dir("gguf-wrap") + "/wrap.gguf";
  test::write_file(path, bytes);
  test::expect_error_within_memory_limit([&] { GgufFile::open(path); },
                                         {"wrap.gguf", "wrap.weight"});
}

// A GGUF file with no metadata and `num_tensors` tensors claimed, padded to `size` bytes.
std::string gguf_header_only(uint64_t num_tensors, uint64_t num_metadata, size_t size) {
  std::string bytes = "GGUF";
  const uint32_t version = 3;
  bytes.append(reinterpret_cast<const char*>(&version), 4);
  bytes.append(reinterpret_cast<const char*>(&num_tensors), 8);
  bytes.append(reinterpret_cast<const char*>(&num_metadata), 8);
  bytes.resize(size, '\0');
  return bytes;
}

TEST(ModelSizeChecks, GgufArrayPastTheElementLimitIsRefused) {
  // One uint8 array of 2^24 + 1 elements: each costs 8 bytes in memory for 1 in the file.
  const uint64_t count = (uint64_t{1} << 24) + 1;
  std::string bytes = gguf_header_only(0, 1, 24);
  const uint64_t key_length = 1;
  bytes.append(reinterpret_cast<const char*>(&key_length), 8);
  bytes += "k";
  const uint32_t array_type = 9, element_type = 0;
  bytes.append(reinterpret_cast<const char*>(&array_type), 4);
  bytes.append(reinterpret_cast<const char*>(&element_type), 4);
  bytes.append(reinterpret_cast<const char*>(&count), 8);
  bytes.resize(bytes.size() + count, '\1');
  const std::string path = test::make_temp_dir("gguf-array") + "/array.gguf";
  test::write_file(path, bytes);
  test::expect_error_within_memory_limit([&] { GgufFile::open(path); },
                                         {"array.gguf", "k", "16777217"});
}

TEST(ModelSizeChecks, GgufTensorCountPastTheLimitIsRefused) {
  const uint64_t count = (uint64_t{1} << 20) + 1;
  const std::string path = test::make_temp_dir("gguf-count") + "/count.gguf";
  test::write_file(path, gguf_header_only(count, 0, 24 + 24 * count));
  test::expect_error_within_memory_limit([&] { GgufFile::open(path); },
                                         {"count.gguf", "tensor count", "1048577"});
}

// A safetensors file holding one tensor entry as given, with `data_bytes` bytes of data.
std::string write_safetensors_header(const std::string& name, const nlohmann::json& entry,
                                     size_t data_bytes) {
  const std::string header = nlohmann::json{{"t", entry}}.dump();
  const uint64_t header_bytes = header.size();
  std::string bytes(reinterpret_cast<const char*>(&header_bytes), 8);
  bytes += header;
  bytes.resize(bytes.size() + data_bytes, '\0');
  const std::string path = test::make_temp_dir("st-size") + "/" + name;
  test::write_file(path, bytes);
  return path;
}

TEST(ModelSizeChecks, SafetensorsShapeWhoseByteCountWouldWrapIsRefused) {
  // [2^40, 2^21] F64 is 2^64 bytes, which wrapped to the 0 bytes of data_offsets [0, 0].
  const std::string path =
      write_safetensors_header("wrap.safetensors",
                               {{"dtype", "F64"},
                                {"shape", {uint64_t{1} << 40, uint64_t{1} << 21}},
                                {"data_offsets", {0, 0}}},
                               0);
  TensorDirectory directory;
  test::expect_error_within_memory_limit([&] { read_safetensors(path, directory); },
                                         {"wrap.safetensors", "tensor t"});
}

TEST(ModelSizeChecks, SafetensorsShapeWithTooManyDimensionsIsRefused) {
  const std::string path = write_safetensors_header(
      "rank.safetensors",
      {{"dtype", "F32"}, {"shape", std::vector<int>(9, 1)}, {"data_offsets", {0, 4}}}, 4);
  TensorDirectory directory;
  test::expect_error_within_memory_limit([&] { read_safetensors(path, directory); },
                                         {"rank.safetensors", "tensor t", "9 dimensions"});
}

TEST(ModelSizeChecks, Llama2cHeaderWhoseSizeWouldWrapIsRefused) {
  // dim 2^20, hidden 2^21, 10485758 layers, 16 heads, vocab 3, seq_len 1 imply about 4.6e20
  // bytes, which wrapped around 2^64 to exactly this file's 262172.
  const int32_t header[7] = {1 << 20, 1 << 21, 10485758, 16, 16, 3, 1};
  std::string bytes(reinterpret_cast<const char*>(header), sizeof header);
  bytes.resize(262172, '\0');
  const std::string dir = test::make_temp_dir("l2c-wrap");
  test::write_file(dir + "/model.bin", bytes);
  test::write_file(dir + "/tokenizer.bin",
                   test::read_file(test::shared_path("models/stories260K/llama2c/tok512.bin")));
  test::expect_error_within_memory_limit([&] { load_model(dir + "/model.bin"); },
                                         {"model.bin", "overflow"});
}

}  // namespace
}  // namespace sluice
