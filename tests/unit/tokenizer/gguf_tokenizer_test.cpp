// GGUF vocabularies against llama.cpp's own tokenizer test vectors (ggml-vocab-*.gguf.inp/.out,
// computed by llama.cpp's reference tokenizers from the same commit as the .gguf files) and the
// stories260K prompt ids.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/core/error.h"
#include "engine/model/gguf_reader.h"
#include "engine/tokenizer/gguf_vocab.h"
#include "engine/tokenizer/tokenizer_loader.h"
#include "tests/support/gguf_builder.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

constexpr EncodeOptions kPlain{.add_bos = false, .add_eos = false, .parse_special = false};

std::unique_ptr<Tokenizer> load_vocab(const std::string& name) {
  const auto file = GgufFile::open(test::shared_path("tokenizers/llamacpp-vocab/" + name));
  return load_gguf_tokenizer(*file);
}

// Encodes every .inp string without BOS and compares with the .out line; checks round trips.
void check_llamacpp_vectors(const std::string& name) {
  const auto tokenizer = load_vocab(name);
  const auto inputs =
      test::read_vocab_test_inputs(test::shared_path("tokenizers/llamacpp-vocab/" + name + ".inp"));
  const auto expected = test::read_vocab_test_outputs(
      test::shared_path("tokenizers/llamacpp-vocab/" + name + ".out"));
  ASSERT_EQ(inputs.size(), 46u);  // the count of separators in the file
  ASSERT_EQ(expected.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto ids = tokenizer->encode(inputs[i], kPlain);
    EXPECT_EQ(ids, expected[i]) << name << " string " << i << ": \"" << inputs[i] << "\"";
    EXPECT_EQ(tokenizer->decode(ids), inputs[i]) << name << " string " << i;
  }
}

TEST(GgufTokenizer, LlamaSpmMatchesLlamaCppVectors) {
  check_llamacpp_vectors("ggml-vocab-llama-spm.gguf");
}

TEST(GgufTokenizer, Gpt2MatchesLlamaCppVectors) {
  check_llamacpp_vectors("ggml-vocab-gpt-2.gguf");
}

// ggml-vocab-llama-spm.gguf holds the Llama 2 vocabulary, so its re-implemented SentencePiece
// must agree with libsentencepiece on the Llama 2 tokenizer.model, on English and Russian text.
TEST(GgufTokenizer, LlamaSpmAgreesWithSentencePiece) {
  const auto gguf = load_vocab("ggml-vocab-llama-spm.gguf");
  const auto reference =
      load_tokenizer_file(test::shared_path("tokenizers/llama2/tokenizer.model"));
  std::vector<std::string> texts;
  const auto records =
      nlohmann::json::parse(test::read_file(test::shared_path("datasets/en/alpaca_5000.json")));
  for (size_t i = 0; i < 200; ++i) {
    texts.push_back(records.at(i).at("instruction").get<std::string>());
    texts.push_back(records.at(i).at("output").get<std::string>());
  }
  std::istringstream russian(
      test::read_file(test::shared_path("datasets/ru/ru_alpaca_seed_tasks.jsonl")));
  for (std::string line; std::getline(russian, line);) {
    texts.push_back(nlohmann::json::parse(line).dump(-1, ' ', /*ensure_ascii=*/false));
  }
  ASSERT_GT(texts.size(), 500u);
  for (const std::string& text : texts) {
    const auto ids = gguf->encode(text, {.add_bos = true});
    ASSERT_EQ(ids, reference->encode(text, {.add_bos = true})) << text;
    EXPECT_EQ(gguf->decode(ids), text);
  }
}

TEST(GgufTokenizer, LlamaSpmMetadata) {
  const auto tokenizer = load_vocab("ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(tokenizer->vocab_size(), 32000);
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  EXPECT_TRUE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->token_kind(0), TokenKind::Unknown);
  EXPECT_EQ(tokenizer->token_kind(1), TokenKind::Control);
  EXPECT_EQ(tokenizer->token_kind(3 + 0x41), TokenKind::Byte);
  EXPECT_EQ(tokenizer->token_text(3 + 0x41), "<0x41>");
  EXPECT_EQ(tokenizer->token_to_bytes(3 + 0x41, false), "A");
  EXPECT_EQ(tokenizer->token_to_bytes(1, false), "");
  // 15043 is "▁Hello": the space survives mid-sequence and is dropped at the start.
  EXPECT_EQ(tokenizer->token_to_bytes(15043, false), " Hello");
  EXPECT_EQ(tokenizer->token_to_bytes(15043, true), "Hello");
  EXPECT_EQ(tokenizer->token_to_bytes(-1, false), "");
  EXPECT_EQ(tokenizer->token_to_bytes(32000, false), "");
}

TEST(GgufTokenizer, Gpt2Metadata) {
  const auto tokenizer = load_vocab("ggml-vocab-gpt-2.gguf");
  EXPECT_EQ(tokenizer->vocab_size(), 50257);
  EXPECT_EQ(tokenizer->bos_id(), 50256);
  EXPECT_EQ(tokenizer->eos_id(), 50256);
  EXPECT_FALSE(tokenizer->add_bos_default());  // no add_bos_token key: llama.cpp's BPE default
  EXPECT_EQ(tokenizer->token_kind(50256), TokenKind::Control);
  EXPECT_EQ(tokenizer->token_text(18435), "\xC4\xA0Hello");     // "ĠHello"
  EXPECT_EQ(tokenizer->token_to_bytes(18435, true), " Hello");  // no SentencePiece space rule
  EXPECT_EQ(tokenizer->token_to_bytes(198, false), "\n");
}

TEST(GgufTokenizer, StoriesPromptWithEmbeddedVocab) {
  const auto file =
      GgufFile::open(test::shared_path("models/stories260K/gguf/stories260K-f32.gguf"));
  const auto tokenizer = load_gguf_tokenizer(*file);
  const auto expected = test::read_json_ids(
      test::shared_path("models/stories260K/expected/prompt.json"), "prompt_ids");
  ASSERT_EQ(expected, (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_TRUE(tokenizer->add_bos_default());
  EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = tokenizer->add_bos_default()}),
            expected);
  EXPECT_EQ(tokenizer->decode(expected), "Once upon a time");
}

TEST(GgufTokenizer, ParseSpecialSplitsControlTokensOnlyWhenAsked) {
  const auto spm = load_vocab("ggml-vocab-llama-spm.gguf");
  const std::string text = "<s>Hello</s>";
  const auto parsed = spm->encode(text, {.add_bos = false, .parse_special = true});
  // <s>, then "Hello" as a fresh fragment (dummy prefix: ▁Hello = 15043), then </s>.
  EXPECT_EQ(parsed, (std::vector<int32_t>{1, 15043, 2}));
  const auto literal = spm->encode(text, kPlain);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 1), 0);
  EXPECT_EQ(std::count(literal.begin(), literal.end(), 2), 0);
  EXPECT_EQ(spm->decode(literal), text);

  const auto gpt2 = load_vocab("ggml-vocab-gpt-2.gguf");
  const std::string chat = "Hello<|endoftext|> world";
  EXPECT_EQ(gpt2->encode(chat, {.add_bos = false, .parse_special = true}),
            (std::vector<int32_t>{15496, 50256, 995}));  // "Hello", <|endoftext|>, "Ġworld"
  const auto gpt2_literal = gpt2->encode(chat, kPlain);
  EXPECT_EQ(std::count(gpt2_literal.begin(), gpt2_literal.end(), 50256), 0);
  EXPECT_EQ(gpt2->decode(gpt2_literal), chat);
}

TEST(GgufTokenizer, BosAndEosOptions) {
  const auto spm = load_vocab("ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(spm->encode("Hello", {.add_bos = true, .add_eos = true}),
            (std::vector<int32_t>{1, 15043, 2}));
  EXPECT_EQ(spm->encode("", {.add_bos = true}), (std::vector<int32_t>{1}));
  EXPECT_EQ(spm->decode(std::vector<int32_t>{1, 15043, 2}), "Hello");
}

TEST(GgufTokenizer, InvalidUtf8UsesByteFallbackAndRoundTrips) {
  const std::string text = "a\xFF\xC3 b\xE2\x82";  // a stray byte, a lone lead, a cut-off € sign
  for (const char* name : {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf"}) {
    const auto tokenizer = load_vocab(name);
    const auto ids = tokenizer->encode(text, kPlain);
    EXPECT_EQ(tokenizer->decode(ids), text) << name;
  }
}

// Found by fuzzing (tests/fuzz): token types stored as floats far outside int64 were cast to an
// integer before the range check. That undefined behaviour is caught by clang's UBSan in the fuzz
// build (tests/fuzz/crashes/gguf_file/token-type-1e30.gguf); GCC's -fsanitize=undefined leaves
// float-to-integer casts unchecked, so here the test pins the error that names the entry.
TEST(GgufTokenizer, TokenTypeOutsideTheIntegersIsRejected) {
  const std::string path = test::make_temp_dir("gguf-vocab") + "/float-type.gguf";
  test::write_file(path,
                   test::GgufBuilder()
                       .add_string("tokenizer.ggml.model", "llama")
                       .add_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "a"})
                       .add_f32_array("tokenizer.ggml.token_type", {2, 3, 3, 1e30f})
                       .build());
  try {
    read_gguf_vocab(*GgufFile::open(path));
    FAIL() << "expected an error for " << path;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.ggml.token_type[3]"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace sluice
