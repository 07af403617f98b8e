// UTF-8 decoding (maximal subparts), the generated category tables, and GPT-2's byte-level
// alphabet. Expected values come from the Unicode Standard and GPT-2's bytes_to_unicode().
#include <gtest/gtest.h>

#include <set>

#include "engine/tokenizer/byte_level.h"
#include "engine/tokenizer/unicode.h"

namespace sluice {
namespace {

TEST(Unicode, DecodesWellFormedCharacters) {
  const std::string text = "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\xA6\x99";  // A é € 🦙
  const char32_t expected[] = {0x41, 0xE9, 0x20AC, 0x1F999};
  const uint8_t lengths[] = {1, 2, 3, 4};
  size_t offset = 0;
  for (int i = 0; i < 4; ++i) {
    const Utf8Char c = decode_utf8(text, offset);
    EXPECT_EQ(c.status, Utf8Status::Valid);
    EXPECT_EQ(c.codepoint, expected[i]);
    EXPECT_EQ(c.num_bytes, lengths[i]);
    offset += c.num_bytes;
  }
  for (const char32_t codepoint : expected) {
    std::string encoded;
    append_utf8(encoded, codepoint);
    EXPECT_EQ(decode_utf8(encoded, 0).codepoint, codepoint);
  }
  EXPECT_EQ(utf8_encode(0xD800), "\xEF\xBF\xBD");  // a surrogate cannot be encoded
}

TEST(Unicode, ReportsMaximalSubparts) {
  // Unicode Standard, Table 3-8's example: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64 has the
  // maximal subparts F1 80 80 | E1 80 | C2 | 80 | 80 | BF, so it becomes a, FFFD x3, b, FFFD,
  // c, FFFD x2, d (also what Python's decode(errors="replace") gives).
  const std::string text = "\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64";
  EXPECT_EQ(sanitize_utf8(text),
            "a\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
            "b\xEF\xBF\xBD"
            "c\xEF\xBF\xBD\xEF\xBF\xBD"
            "d");
  EXPECT_EQ(decode_utf8("\xE0\x80\x80", 0).status, Utf8Status::Invalid);  // overlong
  EXPECT_EQ(decode_utf8("\xE0\x80\x80", 0).num_bytes, 1);
  EXPECT_EQ(decode_utf8("\xED\xA0\x80", 0).status, Utf8Status::Invalid);      // surrogate
  EXPECT_EQ(decode_utf8("\xF4\x90\x80\x80", 0).status, Utf8Status::Invalid);  // > U+10FFFF
  const Utf8Char cut = decode_utf8("\xF0\x9F\xA6", 0);
  EXPECT_EQ(cut.status, Utf8Status::Incomplete);
  EXPECT_EQ(cut.num_bytes, 3);
  EXPECT_TRUE(is_valid_utf8("plain \xE2\x82\xAC"));
  EXPECT_FALSE(is_valid_utf8("cut \xE2\x82"));
}

TEST(Unicode, Categories) {
  EXPECT_TRUE(is_unicode_letter('a'));
  EXPECT_TRUE(is_unicode_letter(0x0416));  // Ж
  EXPECT_TRUE(is_unicode_letter(0x6211));  // 我 (Lo)
  EXPECT_TRUE(is_unicode_letter(0x02B0));  // ʰ (Lm)
  EXPECT_FALSE(is_unicode_letter('1'));
  EXPECT_TRUE(is_unicode_number('7'));
  EXPECT_TRUE(is_unicode_number(0x00BD));                      // ½ (No)
  EXPECT_TRUE(is_unicode_number(0x2167));                      // Ⅷ (Nl)
  EXPECT_TRUE(is_unicode_number(0x0663));                      // Arabic-Indic three (Nd)
  EXPECT_EQ(unicode_category(0x0301), UnicodeCategory::Mark);  // combining acute
  EXPECT_EQ(unicode_category('!'), UnicodeCategory::Punctuation);
  EXPECT_EQ(unicode_category('$'), UnicodeCategory::Symbol);
  EXPECT_EQ(unicode_category(0x1F999), UnicodeCategory::Symbol);  // 🦙 (So)
  EXPECT_EQ(unicode_category(0x00A0), UnicodeCategory::Separator);
  EXPECT_EQ(unicode_category(0x200D), UnicodeCategory::Other);    // ZWJ (Cf)
  EXPECT_EQ(unicode_category(0x10FFFF), UnicodeCategory::Other);  // noncharacter
  EXPECT_EQ(unicode_category(0x110000), UnicodeCategory::Other);
  for (const char32_t space : {0x09, 0x0A, 0x0D, 0x20, 0x85, 0xA0, 0x2003, 0x2028, 0x3000}) {
    EXPECT_TRUE(is_unicode_whitespace(space)) << static_cast<uint32_t>(space);
  }
  for (const char32_t other : {0x1C, 0x200B, 0x41, 0xFEFF}) {
    EXPECT_FALSE(is_unicode_whitespace(other)) << static_cast<uint32_t>(other);
  }
}

TEST(ByteLevel, MatchesGpt2Alphabet) {
  EXPECT_EQ(byte_to_byte_level('A'), U'A');
  EXPECT_EQ(byte_to_byte_level(' '), 0x120);   // "Ġ"
  EXPECT_EQ(byte_to_byte_level('\n'), 0x10A);  // "Ċ"
  EXPECT_EQ(byte_to_byte_level(0x00), 0x100);
  EXPECT_EQ(byte_to_byte_level(0xAD), 0x143);  // soft hyphen: the last remapped byte
  EXPECT_EQ(byte_to_byte_level(0xFF), 0xFF);
  std::set<char32_t> seen;
  for (int byte = 0; byte < 256; ++byte) {
    const char32_t codepoint = byte_to_byte_level(static_cast<uint8_t>(byte));
    EXPECT_TRUE(seen.insert(codepoint).second);
    EXPECT_EQ(byte_level_to_byte(codepoint), byte);
  }
  EXPECT_FALSE(byte_level_to_byte(0x144).has_value());
  std::string all_bytes;
  for (int byte = 0; byte < 256; ++byte) all_bytes.push_back(static_cast<char>(byte));
  EXPECT_EQ(decode_byte_level(encode_byte_level(all_bytes)), all_bytes);
  EXPECT_EQ(encode_byte_level(" Hi\n"), "\xC4\xA0Hi\xC4\x8A");
}

}  // namespace
}  // namespace sluice
