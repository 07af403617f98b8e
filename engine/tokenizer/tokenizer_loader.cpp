#include "engine/tokenizer/tokenizer_loader.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/core/mapped_file.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/gguf_bpe_tokenizer.h"
#include "engine/tokenizer/gguf_spm_tokenizer.h"
#include "engine/tokenizer/gguf_vocab.h"
#include "engine/tokenizer/hf_tokenizer_config.h"
#include "engine/tokenizer/hf_tokenizer_json.h"
#include "engine/tokenizer/llama2c_tokenizer.h"
#include "engine/tokenizer/sentencepiece_tokenizer.h"

namespace sluice {

namespace {

namespace fs = std::filesystem;

enum class VocabSizeRule { Exact, AtMost };

void check_vocab_size(const Tokenizer& tokenizer, int expected_vocab_size, const std::string& path,
                      VocabSizeRule rule) {
  if (expected_vocab_size < 0) return;
  const int actual = tokenizer.vocab_size();
  const bool fits =
      rule == VocabSizeRule::Exact ? actual == expected_vocab_size : actual <= expected_vocab_size;
  if (!fits) {
    fail(path, ": vocab size mismatch: the tokenizer has ", actual,
         " tokens but the model's vocab_size is ", expected_vocab_size);
  }
}

bool starts_with_json_object(std::span<const uint8_t> bytes) {
  const auto first =
      std::find_if(bytes.begin(), bytes.end(), [](uint8_t byte) { return !std::isspace(byte); });
  return first != bytes.end() && *first == '{';
}

// Returns the first bytes of a file as printable text for an error message.
std::string describe_start(std::span<const uint8_t> bytes) {
  std::string out;
  for (size_t i = 0; i < std::min<size_t>(bytes.size(), 8); ++i) {
    out += std::isprint(bytes[i]) ? std::string(1, static_cast<char>(bytes[i]))
                                  : str_cat("\\x", "0123456789abcdef"[bytes[i] >> 4],
                                            "0123456789abcdef"[bytes[i] & 15]);
  }
  return out;
}

SentencePieceOptions sentencepiece_options(const std::string& dir) {
  SentencePieceOptions options;
  const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
  if (fs::exists(config_path)) {
    HfTokenizerConfig config = read_hf_tokenizer_config(config_path.string());
    options.add_bos = config.add_bos_token.value_or(true);  // LlamaTokenizer's default
    options.add_eos = config.add_eos_token.value_or(false);
    options.bos_token = std::move(config.bos_token);
    options.eos_token = std::move(config.eos_token);
    options.added_tokens = std::move(config.added_tokens);
  }
  const fs::path generation_path = fs::path(dir) / "generation_config.json";
  if (fs::exists(generation_path)) {
    options.extra_stop_ids = read_hf_generation_eos_ids(generation_path.string());
  }
  return options;
}

// Refuses generation_config.json eos ids that name no token of the loaded vocabulary.
void check_generation_eos_ids(const std::vector<int32_t>& ids, const Tokenizer& tokenizer,
                              const std::string& dir) {
  for (const int32_t id : ids) {
    if (id >= tokenizer.vocab_size()) {
      fail((fs::path(dir) / "generation_config.json").string(), ": eos_token_id ", id,
           " is outside the vocabulary of ", tokenizer.vocab_size(), " tokens");
    }
  }
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer_file(const std::string& path, int expected_vocab_size) {
  if (fs::is_directory(path)) return load_hf_tokenizer(path, expected_vocab_size);
  if (!fs::exists(path)) fail(path, ": tokenizer file not found");

  const auto file = MappedFile::open(path);
  const std::span<const uint8_t> bytes(file->data(), file->size());
  std::unique_ptr<Tokenizer> tokenizer;
  VocabSizeRule rule = VocabSizeRule::Exact;
  if (is_gguf_file(path)) {
    tokenizer = load_gguf_tokenizer(*GgufFile::open(path));
  } else if (starts_with_json_object(bytes)) {
    tokenizer = load_hf_tokenizer_json(path, HfTokenizerConfig{});
    rule = VocabSizeRule::AtMost;
  } else if (SentencePieceTokenizer::looks_like_sentencepiece_model(bytes)) {
    tokenizer = SentencePieceTokenizer::load(path);
  } else if (Llama2cTokenizer::looks_like_llama2c_tokenizer(bytes)) {
    tokenizer = Llama2cTokenizer::parse(bytes, path, expected_vocab_size);
  } else {
    fail(path, ": not a tokenizer file (", bytes.size(), " bytes starting \"",
         describe_start(bytes),
         "\"): expected a SentencePiece .model, a llama2.c tokenizer.bin, a GGUF file or a "
         "tokenizer.json");
  }
  check_vocab_size(*tokenizer, expected_vocab_size, path, rule);
  return tokenizer;
}

std::unique_ptr<Tokenizer> load_gguf_tokenizer(const GgufFile& file) {
  GgufVocab vocab = read_gguf_vocab(file);
  if (vocab.model == "llama") return std::make_unique<GgufSpmTokenizer>(std::move(vocab));
  if (vocab.model == "gpt2") return make_gguf_bpe_tokenizer(std::move(vocab));
  fail(file.path(), ": metadata tokenizer.ggml.model is '", vocab.model,
       "'; Sluice reads \"llama\" (SentencePiece) and \"gpt2\" (byte-level BPE) vocabularies");
}

std::unique_ptr<Tokenizer> load_hf_tokenizer(const std::string& dir, int expected_vocab_size) {
  if (!fs::is_directory(dir))
    fail(dir, ": not a directory (expected a Hugging Face model directory)");
  const fs::path model_path = fs::path(dir) / "tokenizer.model";
  const fs::path json_path = fs::path(dir) / "tokenizer.json";
  std::unique_ptr<Tokenizer> tokenizer;
  std::string path;
  if (fs::exists(model_path)) {
    path = model_path.string();
    SentencePieceOptions options = sentencepiece_options(dir);
    const std::vector<int32_t> generation_eos_ids = options.extra_stop_ids;
    tokenizer = SentencePieceTokenizer::load(path, std::move(options));
    check_generation_eos_ids(generation_eos_ids, *tokenizer, dir);
  } else if (fs::exists(json_path)) {
    path = json_path.string();
    const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
    const HfTokenizerConfig config = fs::exists(config_path)
                                         ? read_hf_tokenizer_config(config_path.string())
                                         : HfTokenizerConfig{};
    tokenizer = load_hf_tokenizer_json(path, config);
  } else {
    fail(dir,
         ": no tokenizer in the directory: expected tokenizer.model (SentencePiece) or "
         "tokenizer.json, and found neither (",
         model_path.string(), " is missing)");
  }
  check_vocab_size(*tokenizer, expected_vocab_size, path, VocabSizeRule::AtMost);
  return tokenizer;
}

}  // namespace sluice
