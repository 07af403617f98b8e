// Token ids in tokenizer files are checked against the number of entries before the vocabulary
// is sized by them, special ids against the vocabulary; and every tokenizer's min_num_tokens is
// a true lower bound on what encode() returns (the prompt-length check relies on it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/memory_limit.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

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

// Texts that stress a lower bound: long pieces, runs of spaces (which SentencePiece's
// normalizer may collapse), special token text, invalid UTF-8 and random bytes.
std::vector<std::string> bound_probe_texts() {
  std::vector<std::string> texts = {
      "",
      "Once upon a time, there was a little girl named Lily.",
      std::string(3000, ' '),
      "a" + std::string(500, ' ') + "b\n\n\n\t\t" + std::string(200, '\n'),
      "<s>Hello</s><unk><|endoftext|>",
      "\xff\xfe\x80 broken \xc3",
      std::string(2000, 'a'),
  };
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::string text(static_cast<size_t>(rng() % 400), '\0');
    for (char& c : text) c = static_cast<char>(rng() % 256);
    texts.push_back(text);
  }
  return texts;
}

TEST(TokenizerSizeChecks, MinNumTokensNeverExceedsWhatEncodeReturns) {
  const std::vector<std::string> sources = {
      "models/stories260K/gguf/stories260K-f32.gguf",
      "models/stories260K/hf",
      "models/stories260K/llama2c/tok512.bin",
      "tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf",
      "tokenizers/llamacpp-vocab/ggml-vocab-llama-spm.gguf",
      "tokenizers/llama2/tokenizer.model",
  };
  for (const auto& source : sources) {
    SCOPED_TRACE(source);
    const auto tokenizer = load_tokenizer_file(test::shared_path(source));
    auto texts = bound_probe_texts();
    const std::string base = test::shared_path("tokenizers/llamacpp-vocab/ggml-vocab-gpt-2.gguf");
    for (const auto& text : test::read_vocab_test_inputs(base + ".inp")) texts.push_back(text);
    for (const auto& text : texts) {
      for (const bool parse_special : {false, true}) {
        const auto ids =
            tokenizer->encode(text, {.add_bos = false, .parse_special = parse_special});
        EXPECT_LE(tokenizer->min_num_tokens(text), ids.size())
            << "text of " << text.size() << " bytes, parse_special " << parse_special;
      }
    }
    // The bound is useful: a long text of words needs many tokens.
    const std::string words(100'000, 'x');
    EXPECT_GE(tokenizer->min_num_tokens(words), words.size() / 256);
  }
}

}  // namespace
}  // namespace sluice
