// Normalisation for deduplication (engine/curate/text_normalize.h): case, punctuation and
// whitespace folded; UTF-8 beyond ASCII and invalid bytes kept byte for byte.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/curate/text_normalize.h"

namespace sluice {
namespace {

TEST(TextNormalize, FoldsCasePunctuationAndWhitespace) {
  EXPECT_EQ(normalize_for_dedup("  Hello,   World!\n\tIt's  2024.  "), "hello world its 2024");
  EXPECT_EQ(normalize_for_dedup("a - b"), "a b");
  EXPECT_EQ(normalize_for_dedup("x\x01y\x7Fz"), "x y z");
  EXPECT_EQ(normalize_for_dedup(""), "");
  EXPECT_EQ(normalize_for_dedup(" ... !? "), "");
}

TEST(TextNormalize, KeepsNonAsciiBytesAsTheyAre) {
  // "Ünïcode Straße" in UTF-8: only the ASCII letters change case.
  EXPECT_EQ(normalize_for_dedup("\xC3\x9Cn\xC3\xAF"
                                "Code Stra\xC3\x9F"
                                "E"),
            "\xC3\x9Cn\xC3\xAF"
            "code stra\xC3\x9F"
            "e");
  // Invalid UTF-8 (a lone continuation byte, a cut sequence, 0xFF) goes through untouched.
  EXPECT_EQ(normalize_for_dedup("A\x80 B\xE2\x82 \xFF!"), "a\x80 b\xE2\x82 \xFF");
}

TEST(TextNormalize, FoldsTypographicPunctuationAndSpaces) {
  // It’s — “quoted”… with a no-break space, a thin space and a zero-width space.
  EXPECT_EQ(normalize_for_dedup("It\xE2\x80\x99s \xE2\x80\x94 \xE2\x80\x9CQuoted\xE2\x80\x9D"
                                "\xE2\x80\xA6\xC2\xA0with\xE2\x80\x89"
                                "a\xE2\x80\x8Bzero"),
            "its quoted with azero");
  EXPECT_EQ(normalize_for_dedup("don\xE2\x80\x99t"), normalize_for_dedup("don't"));
  EXPECT_EQ(normalize_for_dedup("a\xE3\x80\x80"
                                "b"),
            "a b");  // the ideographic space
  // Other scripts' characters and symbols stay: "€" and "日本".
  EXPECT_EQ(normalize_for_dedup("\xE2\x82\xAC"
                                "5 \xE6\x97\xA5\xE6\x9C\xAC"),
            "\xE2\x82\xAC"
            "5 \xE6\x97\xA5\xE6\x9C\xAC");
}

TEST(TextNormalize, PunctuationAfterAnInvalidByteSeparatesSoNormalisingTwiceChangesNothing) {
  // Dropping the '!' would join E2 80 and 93 into U+2013, which a second pass would drop.
  const std::string once = normalize_for_dedup("A\xE2\x80!\x93");
  EXPECT_EQ(once, "a\xE2\x80 \x93");
  EXPECT_EQ(normalize_for_dedup(once), once);
}

TEST(TextNormalize, WordsOfSplitsTheNormalisedText) {
  EXPECT_EQ(words_of("The cat, the HAT."), (std::vector<std::string>{"the", "cat", "the", "hat"}));
  EXPECT_TRUE(words_of("  ,;  ").empty());
  EXPECT_EQ(split_normalized_words("a bb c").size(), 3u);
}

TEST(TextNormalize, HashesAreStableAndOrderSensitive) {
  // The empty text has a hash like any other; order and length both count.
  EXPECT_EQ(hash_bytes(""), hash_bytes(std::string_view()));
  EXPECT_NE(hash_bytes("ab"), hash_bytes("ba"));
  const uint64_t ab[] = {hash_bytes("a"), hash_bytes("b")};
  const uint64_t ba[] = {hash_bytes("b"), hash_bytes("a")};
  EXPECT_NE(hash_word_sequence(ab, 2), hash_word_sequence(ba, 2));
  EXPECT_NE(hash_word_sequence(ab, 1), hash_word_sequence(ab, 2));
}

}  // namespace
}  // namespace sluice
