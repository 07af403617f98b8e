// StreamingDetokenizer: whole characters only, held-back partial characters, U+FFFD for
// ill-formed bytes, and agreement with Tokenizer::decode.
#include <gtest/gtest.h>

#include "engine/tokenizer/llama2c_tokenizer.h"
#include "engine/tokenizer/streaming_detokenizer.h"
#include "engine/tokenizer/unicode.h"
#include "tests/support/test_paths.h"
#include "tests/unit/tokenizer/tokenizer_test_data.h"

namespace sluice {
namespace {

// The tok512 vocabulary has byte pieces <0x00>..<0xFF> at ids 3..258.
int32_t byte_token(uint8_t byte) {
  return byte + 3;
}

std::unique_ptr<Llama2cTokenizer> stories_tokenizer() {
  return Llama2cTokenizer::load(test::shared_path("models/stories260K/llama2c/tok512.bin"));
}

TEST(StreamingDetokenizer, HoldsBackSplitCharacterUntilComplete) {
  const auto tokenizer = stories_tokenizer();
  ASSERT_EQ(tokenizer->token_text(byte_token(0xE6)), "<0xE6>");
  StreamingDetokenizer stream(*tokenizer, true);
  EXPECT_EQ(stream.push(tokenizer->bos_id()), "");
  EXPECT_EQ(stream.push(403), "Once");  // the space after BOS is dropped
  // "日" = E6 97 A5 arrives one byte token at a time: nothing until the last byte.
  EXPECT_EQ(stream.push(byte_token(0xE6)), "");
  EXPECT_EQ(stream.push(byte_token(0x97)), "");
  EXPECT_EQ(stream.push(byte_token(0xA5)), "\xE6\x97\xA5");
  EXPECT_EQ(stream.push(407), " upon");
  EXPECT_EQ(stream.finish(), "");
  EXPECT_EQ(stream.text(), "Once\xE6\x97\xA5 upon");
}

TEST(StreamingDetokenizer, InvalidBytesBecomeReplacementCharacters) {
  const auto tokenizer = stories_tokenizer();
  StreamingDetokenizer stream(*tokenizer, false);
  EXPECT_EQ(stream.push(byte_token(0xFF)), "\xEF\xBF\xBD");  // never valid in UTF-8
  EXPECT_EQ(stream.push(byte_token(0xE6)), "");              // may still become a character
  // "a" cannot continue E6: the held byte becomes U+FFFD and "a" follows.
  EXPECT_EQ(stream.push(byte_token('a')),
            "\xEF\xBF\xBD"
            "a");
  EXPECT_EQ(stream.push(byte_token(0xF0)), "");
  EXPECT_EQ(stream.push(byte_token(0x9F)), "");
  EXPECT_EQ(stream.finish(), "\xEF\xBF\xBD");  // F0 9F is an incomplete character at the end
  EXPECT_EQ(stream.text(),
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "a\xEF\xBF\xBD");
}

TEST(StreamingDetokenizer, ConcatenationEqualsDecode) {
  const auto tokenizer = stories_tokenizer();
  const auto tokens = test::read_json_ids(
      test::shared_path("models/stories260K/expected/greedy_n256.json"), "tokens");
  // Splice byte tokens of multi-byte characters into the story so characters cross tokens.
  std::vector<int32_t> ids(tokens.begin(), tokens.begin() + 20);
  for (const uint8_t byte : {0xF0, 0x9F, 0xA6, 0x99, 0xC3, 0xA9}) ids.push_back(byte_token(byte));
  ids.insert(ids.end(), tokens.begin() + 20, tokens.end());

  StreamingDetokenizer stream(*tokenizer, true);
  std::string streamed;
  for (const int32_t id : ids) {
    const std::string piece = stream.push(id);
    EXPECT_TRUE(is_valid_utf8(piece));
    streamed += piece;
  }
  streamed += stream.finish();
  const std::string decoded = tokenizer->decode(ids);
  EXPECT_NE(decoded.find("\xF0\x9F\xA6\x99\xC3\xA9"), std::string::npos);  // 🦙é
  EXPECT_EQ(streamed, decoded);
  EXPECT_EQ(stream.text(), decoded);
}

}  // namespace
}  // namespace sluice
