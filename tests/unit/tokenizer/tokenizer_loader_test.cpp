// load_tokenizer_file detects the format by content (not by name), checks the vocab size
// against the model, and fails with errors that name the file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "engine/core/error.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::vector<int32_t> kPromptIds = {1, 403, 407, 261, 378};

// Copies a shared file under a misleading name so detection cannot rely on the extension.
std::string copy_as(const std::string& relative, const std::string& name) {
  const std::string path = test::make_temp_dir("loader") + "/" + name;
  std::filesystem::copy_file(test::shared_path(relative), path);
  return path;
}

TEST(TokenizerLoader, DetectsEveryStoriesFormatByContent) {
  ASSERT_EQ(test::read_json_ids(test::shared_path("models/stories260K/expected/prompt.json"),
                                "prompt_ids"),
            kPromptIds);
  const std::vector<std::pair<std::string, std::string>> files = {
      {"models/stories260K/llama2c/tok512.bin", "llama2.c"},
      {"models/stories260K/llama2c/tok512.model", "sentencepiece"},
      {"models/stories260K/gguf/stories260K-f32.gguf", "gguf llama"},
  };
  for (const auto& [relative, kind] : files) {
    const auto tokenizer = load_tokenizer_file(copy_as(relative, "tokenizer.dat"), 512);
    EXPECT_THAT(tokenizer->describe(), StartsWith(kind)) << relative;
    EXPECT_EQ(tokenizer->vocab_size(), 512) << relative;
    EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = true}), kPromptIds) << relative;
    EXPECT_EQ(tokenizer->decode(kPromptIds), "Once upon a time") << relative;
  }
  const auto from_dir = load_tokenizer_file(test::shared_path("models/stories260K/hf"), 512);
  EXPECT_EQ(from_dir->encode("Once upon a time", {.add_bos = true}), kPromptIds);
}

TEST(TokenizerLoader, VocabSizeMismatchNamesBothNumbersAndFile) {
  for (const char* relative :
       {"models/stories260K/llama2c/tok512.bin", "models/stories260K/llama2c/tok512.model",
        "models/stories260K/gguf/stories260K-f32.gguf"}) {
    const std::string path = test::shared_path(relative);
    try {
      load_tokenizer_file(path, 32000);
      ADD_FAILURE() << relative << ": expected a vocab size mismatch";
    } catch (const Error& error) {
      EXPECT_THAT(error.what(), HasSubstr(path));
      EXPECT_THAT(error.what(), HasSubstr("512"));
      EXPECT_THAT(error.what(), HasSubstr("32000"));
    }
  }
  // An HF directory may have fewer tokens than the model's (padded) embedding, never more.
  EXPECT_EQ(load_tokenizer_file(test::shared_path("models/stories260K/hf"), 640)->vocab_size(),
            512);
  EXPECT_THAT([] { load_tokenizer_file(test::shared_path("models/stories260K/hf"), 500); },
              ::testing::ThrowsMessage<Error>(HasSubstr("vocab size mismatch")));
}

TEST(TokenizerLoader, RejectsFilesThatAreNoTokenizer) {
  const std::string dir = test::make_temp_dir("loader-bad");
  test::write_file(dir + "/notes.txt", "Hello, this is a plain text file.\n");
  test::write_file(dir + "/empty.bin", "");
  // The stories model weights: binary, but no tokenizer (its header is 7 int32 dimensions).
  const std::string weights = test::shared_path("models/stories260K/llama2c/stories260K.bin");
  for (const std::string& path : {dir + "/notes.txt", dir + "/empty.bin", weights}) {
    try {
      load_tokenizer_file(path);
      ADD_FAILURE() << path << ": expected an error";
    } catch (const Error& error) {
      EXPECT_THAT(error.what(), StartsWith(path)) << error.what();
    }
  }
  EXPECT_THAT(
      [&] { load_tokenizer_file(dir + "/missing.model"); },
      ::testing::ThrowsMessage<Error>(HasSubstr(dir + "/missing.model: tokenizer file not found")));
}

TEST(TokenizerLoader, TruncatedTokenizerBinNamesTokenIndex) {
  const std::string real =
      test::read_file(test::shared_path("models/stories260K/llama2c/tok512.bin"));
  const std::string path = test::make_temp_dir("loader-cut") + "/tok512.bin";
  test::write_file(path, real.substr(0, real.size() / 2));
  try {
    load_tokenizer_file(path, 512);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), StartsWith(path));
    EXPECT_THAT(error.what(), HasSubstr("token "));
  }
}

TEST(TokenizerLoader, UnsupportedGgufVocabularyNamesKey) {
  // The stories model's GGUF has tokenizer.ggml.model "llama"; a GGUF without a tokenizer (the
  // model arrays cut off) must fail cleanly: a cut file fails in the GGUF reader, naming it.
  const std::string real =
      test::read_file(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  const std::string path = test::make_temp_dir("loader-gguf") + "/cut.gguf";
  test::write_file(path, real.substr(0, 2000));
  EXPECT_THAT([&] { load_tokenizer_file(path); },
              ::testing::ThrowsMessage<Error>(StartsWith(path)));
}

}  // namespace
}  // namespace sluice
