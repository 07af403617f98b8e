// The hand-coded pre-tokenizers against their regexes. Expected words were computed with
// Python's re engine running each pattern (\p{L} and \p{N} expanded from unicodedata into
// character classes), an independent implementation of the same regex semantics.
#include <gtest/gtest.h>

#include "engine/tokenizer/pre_tokenizer.h"

namespace sluice {
namespace {

struct SplitCase {
  PreTokenizer kind;
  std::string text;
  std::vector<std::string> words;
};

const std::vector<SplitCase>& split_cases() {
  using P = PreTokenizer;
  static const std::vector<SplitCase> cases = {
      {P::Gpt2, "Hello world", {"Hello", " world"}},
      {P::Gpt2, "   Hello", {"  ", " Hello"}},
      {P::Gpt2, "I'VE been 'told he's", {"I", "'", "VE", " been", " '", "told", " he", "'s"}},
      {P::Gpt2, "\tfoo\n\n  bar  ", {"\t", "foo", "\n\n ", " bar", "  "}},
      {P::Gpt2, "12345 abc", {"12345", " abc"}},
      {P::Gpt2, "x  \n\n y", {"x", "  \n\n", " y"}},
      {P::Gpt2,
       "(hello) \xC2\xBD"
       "3 \xE3\x80\x80z",
       {"(", "hello", ")",
        " \xC2\xBD"
        "3",
        " ", "\xE3\x80\x80", "z"}},
      {P::Gpt2, "a\r\n\r\nb", {"a", "\r\n\r", "\n", "b"}},
      {P::Gpt2, "don't STOP'S", {"don", "'t", " STOP", "'", "S"}},
      {P::Gpt2, "  \n  x", {"  \n ", " x"}},
      {P::Llama3, "Hello world", {"Hello", " world"}},
      {P::Llama3, "   Hello", {"  ", " Hello"}},
      {P::Llama3, "I'VE been 'told he's", {"I", "'VE", " been", " '", "told", " he", "'s"}},
      {P::Llama3, "\tfoo\n\n  bar  ", {"\tfoo", "\n\n", " ", " bar", "  "}},
      {P::Llama3, "12345 abc", {"123", "45", " abc"}},
      {P::Llama3, "x  \n\n y", {"x", "  \n\n", " y"}},
      {P::Llama3,
       "(hello) \xC2\xBD"
       "3 \xE3\x80\x80z",
       {"(hello", ")", " ",
        "\xC2\xBD"
        "3",
        " ", "\xE3\x80\x80z"}},
      {P::Llama3, "a\r\n\r\nb", {"a", "\r\n\r\n", "b"}},
      {P::Llama3, "don't STOP'S", {"don", "'t", " STOP", "'S"}},
      {P::Llama3, "  \n  x", {"  \n", " ", " x"}},
      {P::Qwen2, "I'VE been 'told he's", {"I", "'VE", " been", " '", "told", " he", "'s"}},
      {P::Qwen2, "\tfoo\n\n  bar  ", {"\tfoo", "\n\n", " ", " bar", "  "}},
      {P::Qwen2, "12345 abc", {"1", "2", "3", "4", "5", " abc"}},
      {P::Qwen2,
       "(hello) \xC2\xBD"
       "3 \xE3\x80\x80z",
       {"(hello", ")", " ", "\xC2\xBD", "3", " ", "\xE3\x80\x80z"}},
      {P::Qwen2, "a\r\n\r\nb", {"a", "\r\n\r\n", "b"}},
      {P::Gpt2IsolatedDigits, "a 123b", {"a", " ", "1", "2", "3", "b"}},
      {P::Gpt2IsolatedDigits, "x1 2", {"x", "1", " ", "2"}},
      {P::Gpt2IsolatedDigits, "v2.0  is  out", {"v", "2", ".", "0", " ", " is", " ", " out"}},
  };
  return cases;
}

TEST(PreTokenizer, MatchesRegexReference) {
  for (const SplitCase& c : split_cases()) {
    const auto views = pre_tokenize(c.text, c.kind);
    const std::vector<std::string> words(views.begin(), views.end());
    EXPECT_EQ(words, c.words) << pre_tokenizer_name(c.kind) << " on \"" << c.text << "\"";
  }
}

TEST(PreTokenizer, KeepsEveryByteOfInvalidUtf8) {
  const std::string text = "ab\xFF\xFE cd \xE2\x82 9\x80";
  for (const PreTokenizer kind : {PreTokenizer::Gpt2, PreTokenizer::Gpt2IsolatedDigits,
                                  PreTokenizer::Llama3, PreTokenizer::Qwen2}) {
    std::string joined;
    for (const std::string_view word : pre_tokenize(text, kind)) {
      EXPECT_FALSE(word.empty());
      joined += word;
    }
    EXPECT_EQ(joined, text) << pre_tokenizer_name(kind);
  }
  EXPECT_TRUE(pre_tokenize("", PreTokenizer::Llama3).empty());
}

TEST(PreTokenizer, GgufNames) {
  EXPECT_EQ(pre_tokenizer_from_gguf_name("gpt-2"), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_gguf_name(""), PreTokenizer::Gpt2);
  EXPECT_EQ(pre_tokenizer_from_gguf_name("llama-bpe"), PreTokenizer::Llama3);
  EXPECT_EQ(pre_tokenizer_from_gguf_name("qwen2"), PreTokenizer::Qwen2);
  EXPECT_EQ(pre_tokenizer_from_gguf_name("smollm"), PreTokenizer::Gpt2IsolatedDigits);
  EXPECT_FALSE(pre_tokenizer_from_gguf_name("deepseek-llm").has_value());
}

}  // namespace
}  // namespace sluice
