// llama2.c tokenizer.bin: the stories260K reference ids and text (computed by llama2.c's run.c
// and a float64 reference, see ../shared/models/stories260K/expected/verification.json),
// agreement with libsentencepiece on the Llama 2 vocabulary over real instructions, and the
// validation of broken files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstring>

#include "engine/core/error.h"
#include "engine/tokenizer/llama2c_tokenizer.h"
#include "engine/tokenizer/sentencepiece_tokenizer.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

using ::testing::HasSubstr;

std::string stories_path(const std::string& relative) {
  return test::shared_path("models/stories260K/" + relative);
}

TEST(Llama2cTokenizer, EncodesStoriesPrompt) {
  const auto tokenizer = Llama2cTokenizer::load(stories_path("llama2c/tok512.bin"));
  EXPECT_EQ(tokenizer->vocab_size(), 512);
  EXPECT_EQ(tokenizer->bos_id(), 1);
  EXPECT_EQ(tokenizer->eos_id(), 2);
  const auto expected = test::read_json_ids(stories_path("expected/prompt.json"), "prompt_ids");
  ASSERT_EQ(expected, (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = true}), expected);
  EXPECT_EQ(tokenizer->encode("Once upon a time", {.add_bos = false, .add_eos = true}),
            (std::vector<int32_t>{403, 407, 261, 378, 2}));
  EXPECT_EQ(tokenizer->encode("", {.add_bos = true}), (std::vector<int32_t>{1}));
}

TEST(Llama2cTokenizer, DecodesGreedyGenerationExactly) {
  const auto tokenizer = Llama2cTokenizer::load(stories_path("llama2c/tok512.bin"));
  const std::string greedy = stories_path("expected/greedy_n256.json");
  const auto generated_ids = test::read_json_ids(greedy, "generated_ids");
  const auto all_tokens = test::read_json_ids(greedy, "tokens");  // BOS + prompt + generated
  ASSERT_EQ(generated_ids.size(), 252u);
  ASSERT_EQ(all_tokens.size(), 257u);

  // generated_n256.txt holds the decoded generated ids with no trailing newline.
  const std::string generated_text = test::read_file(stories_path("expected/generated_n256.txt"));
  ASSERT_FALSE(generated_text.empty());
  ASSERT_NE(generated_text.back(), '\n');
  EXPECT_EQ(tokenizer->decode(generated_ids), generated_text);

  // run.c prints the prompt and the generation as one stream and then a newline of its own.
  const std::string runc_text = test::read_file(stories_path("expected/runc_n256.txt"));
  EXPECT_EQ(tokenizer->decode(all_tokens) + "\n", runc_text);
  EXPECT_EQ(tokenizer->decode(all_tokens), "Once upon a time" + generated_text);
}

TEST(Llama2cTokenizer, DecodesLikeRunC) {
  const auto tokenizer = Llama2cTokenizer::load(stories_path("llama2c/tok512.bin"));
  EXPECT_EQ(tokenizer->token_text(403), " Once");
  EXPECT_EQ(tokenizer->token_to_bytes(403, true), "Once");  // after BOS: space stripped
  EXPECT_EQ(tokenizer->token_to_bytes(403, false), " Once");
  EXPECT_EQ(tokenizer->token_text(3 + 0x0A), "<0x0A>");
  EXPECT_EQ(tokenizer->token_to_bytes(3 + 0x0A, false), "\n");  // byte pieces decode to the byte
  EXPECT_EQ(tokenizer->token_kind(3 + 0x0A), TokenKind::Byte);
  EXPECT_EQ(tokenizer->token_to_bytes(1, false), "");  // BOS "\n<s>\n" is a control token
  EXPECT_EQ(tokenizer->token_kind(1), TokenKind::Control);
  EXPECT_EQ(tokenizer->token_kind(0), TokenKind::Unknown);
  EXPECT_EQ(tokenizer->token_to_bytes(512, false), "");
}

TEST(Llama2cTokenizer, ByteFallbackForMissingCharacters) {
  const auto tokenizer = Llama2cTokenizer::load(stories_path("llama2c/tok512.bin"));
  // "日" (E6 97 A5) is not among the 512 pieces: run.c emits byte pieces, id = byte + 3, after
  // the dummy-prefix piece "▁" (id 410 in tok512.vocab).
  const auto ids = tokenizer->encode("\xE6\x97\xA5", {.add_bos = false});
  EXPECT_EQ(ids, (std::vector<int32_t>{410, 0xE6 + 3, 0x97 + 3, 0xA5 + 3}));
  EXPECT_EQ(tokenizer->decode(ids), "\xE6\x97\xA5");
}

TEST(Llama2cTokenizer, AgreesWithSentencePieceOnLlama2Vocabulary) {
  const auto llama2c = Llama2cTokenizer::load(test::shared_path("tokenizers/llama2/tokenizer.bin"));
  const auto sentencepiece =
      SentencePieceTokenizer::load(test::shared_path("tokenizers/llama2/tokenizer.model"));
  ASSERT_EQ(llama2c->vocab_size(), 32000);
  ASSERT_EQ(sentencepiece->vocab_size(), 32000);

  const auto records =
      nlohmann::json::parse(test::read_file(test::shared_path("datasets/en/alpaca_5000.json")));
  std::vector<std::string> texts;
  for (size_t i = 0; i < 300 && i < records.size(); ++i) {
    texts.push_back(records[i].at("instruction").get<std::string>());
    const std::string input = records[i].at("input").get<std::string>();
    if (!input.empty()) texts.push_back(input);
    if (i % 3 == 0) texts.push_back(records[i].at("output").get<std::string>());  // newlines, lists
  }
  ASSERT_GE(texts.size(), 400u);

  size_t num_with_byte_fallback = 0;
  for (const std::string& text : texts) {
    const auto ids = llama2c->encode(text, {.add_bos = true});
    ASSERT_EQ(ids, sentencepiece->encode(text, {.add_bos = true})) << text;
    EXPECT_EQ(llama2c->decode(ids), text);
    EXPECT_EQ(sentencepiece->decode(ids), text);
    for (const int32_t id : ids) {
      if (llama2c->token_kind(id) == TokenKind::Byte) {
        ++num_with_byte_fallback;
        break;
      }
    }
  }
  // Outputs contain newlines, which Llama 2 has only as <0x0A>: byte fallback is exercised.
  EXPECT_GT(num_with_byte_fallback, 10u);
}

TEST(Llama2cTokenizer, AgreesWithSentencePieceOnUnusualText) {
  const auto llama2c = Llama2cTokenizer::load(test::shared_path("tokenizers/llama2/tokenizer.bin"));
  const auto sentencepiece =
      SentencePieceTokenizer::load(test::shared_path("tokenizers/llama2/tokenizer.model"));
  for (const std::string text :
       {"  leading spaces", "trailing  ", "tab\tand\nnewline", "日本語のテキスト", "emoji 🦙🚀",
        "Ünïcödé façade", "x", " ", "\n\n"}) {
    const auto ids = llama2c->encode(text, {.add_bos = false});
    EXPECT_EQ(ids, sentencepiece->encode(text, {.add_bos = false})) << text;
    EXPECT_EQ(llama2c->decode(ids), text);
  }
}

// Builds a tokenizer.bin in memory: max_token_length, then (score, length, bytes) records.
std::string make_tokenizer_bin(int32_t max_token_length,
                               const std::vector<std::pair<std::string, int32_t>>& records) {
  std::string out(reinterpret_cast<const char*>(&max_token_length), 4);
  for (const auto& [piece, length] : records) {
    const float score = 0.0f;
    out.append(reinterpret_cast<const char*>(&score), 4);
    out.append(reinterpret_cast<const char*>(&length), 4);
    out.append(piece);
  }
  return out;
}

void expect_load_error(const std::string& content, const std::string& what) {
  const std::string path = test::make_temp_dir("llama2c") + "/tokenizer.bin";
  test::write_file(path, content);
  try {
    Llama2cTokenizer::load(path);
    ADD_FAILURE() << "expected an error containing \"" << what << "\"";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr(path));
    EXPECT_THAT(error.what(), HasSubstr(what));
  }
}

TEST(Llama2cTokenizer, RejectsBrokenFiles) {
  const std::string real = test::read_file(stories_path("llama2c/tok512.bin"));
  // Cut in the middle of the last record's bytes, and in the middle of a record header.
  expect_load_error(real.substr(0, real.size() - 1), "token 511");
  expect_load_error(real.substr(0, 4 + 13 + 3), "token 1 score");  // <unk> record is 13 bytes
  expect_load_error("", "too short");
  expect_load_error(make_tokenizer_bin(-3, {}), "max_token_length is -3");
  expect_load_error(make_tokenizer_bin(8, {{"<unk>", 5}, {"<s>", -2}}),
                    "token 1 has a negative length");
  expect_load_error(make_tokenizer_bin(4, {{"<unk>", 5}}), "token 0 is 5 bytes, longer than");
  std::string past_end = make_tokenizer_bin(100, {{"a", 1}, {"b", 1}, {"c", 1}});
  const int32_t huge = 90;
  std::memcpy(past_end.data() + past_end.size() - 5, &huge, 4);  // the last record's length
  expect_load_error(past_end, "token 2 (90 bytes");
}

TEST(Llama2cTokenizer, ChecksVocabSizeAgainstModel) {
  const std::string path = stories_path("llama2c/tok512.bin");
  EXPECT_EQ(Llama2cTokenizer::load(path, 512)->vocab_size(), 512);
  try {
    Llama2cTokenizer::load(path, 32000);
    ADD_FAILURE() << "expected a vocab size mismatch";
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr(path));
    EXPECT_THAT(error.what(), HasSubstr("512"));
    EXPECT_THAT(error.what(), HasSubstr("32000"));
  }
}

}  // namespace
}  // namespace sluice
