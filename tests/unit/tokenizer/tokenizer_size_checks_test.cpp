// Token ids in tokenizer files are checked against the number of entries before the vocabulary
// is sized by them, special ids against the vocabulary.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/memory_limit.h"
#include "tests/support/test_paths.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A byte-level tokenizer.json with the 256 single-byte tokens, the given extra vocab entries
// and added tokens.
std::string write_tokenizer_json(const Json& extra_vocab, const Json& added_tokens) {
  const auto gguf =
      GgufFile::open(test::shared_path("tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf"));
  const auto& tokens = gguf->get_string_array("tokenizer.ggml.tokens");
  Json vocab = Json::object();
  for (size_t id = 0; id < 256; ++id) vocab[tokens[id]] = id;
  vocab.update(extra_vocab);
  Json json;
  json["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", Json::array()}};
  json["added_tokens"] = added_tokens;
  json["pre_tokenizer"] = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  const std::string path = test::make_temp_dir("tok-json") + "/tokenizer.json";
  test::write_file(path, json.dump());
  return path;
}

TEST(TokenizerSizeChecks, TokenizerJsonIdFarPastItsEntriesIsRefusedBeforeAllocating) {
  // The vocabulary is sized by its largest id: 3e8 strings would take gigabytes.
  const std::string vocab_path = write_tokenizer_json({{"far", 300'000'000}}, Json::array());
  test::expect_error_within_memory_limit(
      [&] { load_tokenizer_file(vocab_path); },
      {"tokenizer.json", "model.vocab[\"far\"]", "300000000", "257"});

  const std::string added_path = write_tokenizer_json(
      Json::object(),
      Json::array({{{"id", 300'000'000}, {"content", "<far>"}, {"special", true}}}));
  test::expect_error_within_memory_limit([&] { load_tokenizer_file(added_path); },
                                         {"tokenizer.json", "added_tokens[0]", "300000000"});
}

TEST(TokenizerSizeChecks, TokenizerJsonWithDenseIdsStillLoads) {
  const std::string path = write_tokenizer_json(
      {{"ab", 256}}, Json::array({{{"id", 257}, {"content", "<x>"}, {"special", true}}}));
  EXPECT_EQ(load_tokenizer_file(path)->vocab_size(), 258);
}

// A copy of the stories260K HF directory's tokenizer files with one file replaced.
std::string hf_tokenizer_dir(const std::string& name, const std::string& file,
                             const std::string& content) {
  const std::string dir = test::make_temp_dir(name);
  for (const char* f : {"tokenizer.model", "tokenizer_config.json", "generation_config.json"}) {
    fs::copy_file(test::shared_path(std::string("models/stories260K/hf/") + f), fs::path(dir) / f);
  }
  test::write_file(dir + "/" + file, content);
  return dir;
}

TEST(TokenizerSizeChecks, AddedTokenIdFarPastTheModelIsRefused) {
  auto config = Json::parse(
      test::read_file(test::shared_path("models/stories260K/hf/tokenizer_config.json")));
  config["added_tokens_decoder"]["2147483647"] = {{"content", "<far>"}, {"special", true}};
  const std::string dir = hf_tokenizer_dir("added-far", "tokenizer_config.json", config.dump());
  test::expect_error_within_memory_limit([&] { load_hf_tokenizer(dir); },
                                         {"added_tokens_decoder", "<far>", "2147483647"});
}

TEST(TokenizerSizeChecks, GenerationConfigEosOutsideTheVocabularyIsRefused) {
  const std::string dir =
      hf_tokenizer_dir("gen-eos", "generation_config.json", R"({"eos_token_id": [2, 99999]})");
  test::expect_error_within_memory_limit([&] { load_hf_tokenizer(dir); },
                                         {"generation_config.json", "eos_token_id", "99999"});
}

}  // namespace
}  // namespace sluice
