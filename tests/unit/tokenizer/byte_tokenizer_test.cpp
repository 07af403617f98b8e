#include "engine/tokenizer/byte_tokenizer.h"

#include <gtest/gtest.h>

#include "engine/core/error.h"

namespace sluice {
namespace {

TEST(ByteTokenizer, BytesMapToIdsAndBack) {
  const ByteTokenizer tokenizer(32000);
  const std::string text = "h\xc3\xa9!";  // é as two bytes
  const auto ids = tokenizer.encode(text, EncodeOptions{.add_bos = true, .add_eos = true});
  EXPECT_EQ(ids, (std::vector<int32_t>{1, 'h' + 3, 0xc3 + 3, 0xa9 + 3, '!' + 3, 2}));
  EXPECT_EQ(tokenizer.decode(ids), text);
  EXPECT_EQ(tokenizer.token_to_bytes(31999, false), "");
  EXPECT_EQ(tokenizer.token_kind(1), TokenKind::Control);
  EXPECT_THROW(ByteTokenizer(100), Error);
}

}  // namespace
}  // namespace sluice
