// SentencePiece .model files through libsentencepiece, and Hugging Face directories
// (tokenizer.model + tokenizer_config.json + generation_config.json).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/core/error.h"
#include "engine/tokenizer/sentencepiece_tokenizer.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::vector<int32_t> stories_prompt_ids() {
  return test::read_json_ids(test::shared_path("models/stories260K/expected/prompt.json"),
                             "prompt_ids");
}

TEST(SentencePieceTokenizer, EncodesStoriesPromptFromModelFile) {
  const auto tokenizer =
      SentencePieceTokenizer::load(test::shared_path("models/stories260K/llama2c/tok512.model"));
  EXPECT_EQ(tokenizer->vocab_size(), 512);
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  EXPECT_TRUE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = true}), stories_prompt_ids());
  EXPECT_EQ(tokenizer->decode(stories_prompt_ids()), "Once upon a time");
  EXPECT_EQ(tokenizer->token_text(403), "\xE2\x96\x81Once");  // "▁Once"
  EXPECT_EQ(tokenizer->token_kind(3 + 0x0A), TokenKind::Byte);
  EXPECT_EQ(tokenizer->token_to_bytes(3 + 0x0A, false), "\n");
  EXPECT_EQ(tokenizer->token_kind(0), TokenKind::Unknown);
  EXPECT_EQ(tokenizer->token_kind(2), TokenKind::Control);
  EXPECT_EQ(tokenizer->token_to_bytes(2, false), "");
}

TEST(SentencePieceTokenizer, EncodesStoriesPromptFromHfDirectory) {
  const auto tokenizer = load_hf_tokenizer(test::shared_path("models/stories260K/hf"));
  EXPECT_EQ(tokenizer->vocab_size(), 512);
  EXPECT_TRUE(tokenizer->add_bos_default());  // tokenizer_config.json: add_bos_token true
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = tokenizer->add_bos_default()}),
            stories_prompt_ids());
  // generation_config.json names only EOS (2), so there are no extra stop ids.
  EXPECT_TRUE(tokenizer->extra_stop_ids().empty());
}

TEST(SentencePieceTokenizer, ParseSpecialSplitsControlPieces) {
  const auto tokenizer =
      SentencePieceTokenizer::load(test::shared_path("models/stories260K/llama2c/tok512.model"));
  const auto prompt = stories_prompt_ids();  // BOS, ▁Once, ▁upon, ▁a, ▁time
  EXPECT_EQ(tokenizer->encode("<s>Once upon a time", {.add_bos = false, .parse_special = true}),
            prompt);
  const auto literal = tokenizer->encode("<s>Once", {.add_bos = false});
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1), 0);
  EXPECT_EQ(tokenizer->decode(literal), "<s>Once");
}

// Writes an HF directory with the stories tokenizer.model and the given config files.
std::string make_hf_dir(const std::string& tokenizer_config, const std::string& generation_config) {
  const std::string dir = test::make_temp_dir("hf-tokenizer");
  std::filesystem::copy_file(test::shared_path("models/stories260K/hf/tokenizer.model"),
                             dir + "/tokenizer.model");
  if (!tokenizer_config.empty()) test::write_file(dir + "/tokenizer_config.json", tokenizer_config);
  if (!generation_config.empty())
    test::write_file(dir + "/generation_config.json", generation_config);
  return dir;
}

TEST(SentencePieceTokenizer, HfConfigOverridesAndAddedTokens) {
  const std::string config = R"({
    "add_bos_token": false,
    "add_eos_token": true,
    "bos_token": {"content": "<s>", "special": true},
    "eos_token": "<|im_end|>",
    "added_tokens_decoder": {
      "2": {"content": "</s>", "special": true},
      "512": {"content": "<|im_start|>", "special": true},
      "513": {"content": "<|im_end|>", "special": true},
      "514": {"content": "[NAME]", "special": false}
    }
  })";
  const auto tokenizer = load_hf_tokenizer(make_hf_dir(config, R"({"eos_token_id": [513, 2]})"));
  EXPECT_EQ(tokenizer->vocab_size(), 515);
  EXPECT_FALSE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 513);
  EXPECT_EQ(tokenizer->extra_stop_ids(), (std::vector<int32_t>{2}));  // 513 is EOS itself
  EXPECT_EQ(tokenizer->token_kind(512), TokenKind::Control);
  EXPECT_EQ(tokenizer->token_kind(514), TokenKind::UserDefined);
  EXPECT_EQ(tokenizer->token_text(512), "<|im_start|>");

  // Special added tokens split only with parse_special; a non-special one always.
  const auto ids = tokenizer->encode("<|im_start|>Once", {.add_bos = false, .parse_special = true});
  EXPECT_EQ(ids, (std::vector<int32_t>{512, 403}));
  EXPECT_EQ(tokenizer->encode("[NAME]", {.add_bos = false}), (std::vector<int32_t>{514}));
  // Only a leading BOS passes the sequence start on, so "▁Once" keeps its space here.
  EXPECT_EQ(tokenizer->decode(std::vector<int32_t>{512, 403, 514, 513}), " Once[NAME]");
  const auto with_eos = tokenizer->encode("Once", {.add_bos = false, .add_eos = true});
  EXPECT_EQ(with_eos, (std::vector<int32_t>{403, 513}));
}

TEST(SentencePieceTokenizer, HfConfigErrorsNameFileAndKey) {
  const std::string bad_json = make_hf_dir("{ not json", "");
  EXPECT_THAT([&] { load_hf_tokenizer(bad_json); },
              ::testing::ThrowsMessage<Error>(HasSubstr("tokenizer_config.json: not valid JSON")));
  const std::string bad_type = make_hf_dir(R"({"add_bos_token": "yes"})", "");
  EXPECT_THAT([&] { load_hf_tokenizer(bad_type); },
              ::testing::ThrowsMessage<Error>(HasSubstr("add_bos_token must be true or false")));
  const std::string bad_id =
      make_hf_dir(R"({"added_tokens_decoder": {"x1": {"content": "a"}}})", "");
  EXPECT_THAT([&] { load_hf_tokenizer(bad_id); },
              ::testing::ThrowsMessage<Error>(HasSubstr("added_tokens_decoder key 'x1'")));
  const std::string unknown_bos = make_hf_dir(R"({"bos_token": "<nope>"})", "");
  EXPECT_THAT([&] { load_hf_tokenizer(unknown_bos); },
              ::testing::ThrowsMessage<Error>(HasSubstr("bos_token '<nope>'")));
}

TEST(SentencePieceTokenizer, MissingTokenizerModelInHfDir) {
  const std::string dir = test::make_temp_dir("hf-empty");
  test::write_file(dir + "/tokenizer_config.json", R"({"add_bos_token": true})");
  try {
    load_hf_tokenizer(dir);
    ADD_FAILURE() << "expected an error";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr(dir));
    EXPECT_THAT(error.what(), HasSubstr("tokenizer.model"));
  }
}

TEST(SentencePieceTokenizer, RejectsFilesThatAreNoModel) {
  const std::string dir = test::make_temp_dir("sp-bad");
  test::write_file(dir + "/text.model", "this is a text file, not a protobuf\n");
  EXPECT_THAT(
      [&] { SentencePieceTokenizer::load(dir + "/text.model"); },
      ::testing::ThrowsMessage<Error>(HasSubstr(dir + "/text.model: not a SentencePiece model")));
  // A real model cut short: still protobuf-shaped at the start, but the framing breaks.
  const std::string real =
      test::read_file(test::shared_path("models/stories260K/llama2c/tok512.model"));
  test::write_file(dir + "/cut.model", real.substr(0, real.size() / 2));
  EXPECT_THAT([&] { SentencePieceTokenizer::load(dir + "/cut.model"); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr(dir + "/cut.model: corrupt or truncated SentencePiece model")));
  // A piece with a NUL byte (found by the fuzzer): libsentencepiece's trie builder would end
  // the process on it; the pieces are "<unj>" (unknown) and "\0\0\x05" "8unk>\x15\x03".
  const std::string nul_piece(
      "\x0a\x0e\x0a\x05<unj>\x15\0\0\0\0\x18\x02"
      "\x0a\x0c\x0a\x0a\0\0\x05"
      "8unk>\x15\x03",
      30);
  test::write_file(dir + "/nul.model", nul_piece);
  EXPECT_THAT([&] { SentencePieceTokenizer::load(dir + "/nul.model"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  dir + "/nul.model: corrupt SentencePiece model: piece 1 contains a NUL byte")));
  EXPECT_THAT([&] { SentencePieceTokenizer::load(dir + "/missing.model"); },
              ::testing::ThrowsMessage<Error>(HasSubstr(dir + "/missing.model")));
}

}  // namespace
}  // namespace sluice
