#include "engine/tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <cstdint>

#include "engine/tokenizer/unicode.h"

namespace sluice {

namespace {

// Every character falls in exactly one of these classes, which is all the patterns look at
// besides a few literal characters (' ', '\'', '\r', '\n', contraction letters).
enum class CharClass : uint8_t { Letter, Number, Space, Other };

constexpr char32_t kNotACodepoint = 0xFFFFFFFF;  // an ill-formed byte sequence

struct Chars {
  std::vector<char32_t> codepoints;
  std::vector<CharClass> classes;
  std::vector<size_t> offsets;  // byte offset of each character, plus the text's size at the end
};

Chars decode_chars(std::string_view text) {
  Chars chars;
  for (size_t offset = 0; offset < text.size();) {
    const Utf8Char c = decode_utf8(text, offset);
    const bool is_valid = c.status == Utf8Status::Valid;
    const char32_t codepoint = is_valid ? c.codepoint : kNotACodepoint;
    CharClass cls = CharClass::Other;
    if (is_valid && is_unicode_whitespace(codepoint)) {
      cls = CharClass::Space;
    } else if (is_valid && is_unicode_letter(codepoint)) {
      cls = CharClass::Letter;
    } else if (is_valid && is_unicode_number(codepoint)) {
      cls = CharClass::Number;
    }
    chars.codepoints.push_back(codepoint);
    chars.classes.push_back(cls);
    chars.offsets.push_back(offset);
    offset += c.num_bytes;
  }
  chars.offsets.push_back(text.size());
  return chars;
}

bool is_newline(char32_t c) {
  return c == '\r' || c == '\n';
}

char32_t ascii_lower(char32_t c) {
  return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

// A view of the characters [begin, end) of one segment: the patterns see end as the text's end.
struct Segment {
  const Chars& chars;
  size_t end;

  char32_t codepoint(size_t i) const { return i < end ? chars.codepoints[i] : kNotACodepoint; }
  bool is(size_t i, CharClass cls) const { return i < end && chars.classes[i] == cls; }
  size_t run_end(size_t i, CharClass cls) const {
    while (is(i, cls)) ++i;
    return i;
  }
};

// 's|'t|'re|'ve|'m|'ll|'d, optionally ASCII case-insensitive (Llama 3's (?i:...)).
size_t match_contraction(const Segment& s, size_t pos, bool ignore_case) {
  if (s.codepoint(pos) != '\'') return 0;
  const auto at = [&](size_t i) {
    return ignore_case ? ascii_lower(s.codepoint(i)) : s.codepoint(i);
  };
  const char32_t first = at(pos + 1);
  if (first == 's' || first == 't' || first == 'm' || first == 'd') return 2;
  const char32_t second = at(pos + 2);
  if ((first == 'r' && second == 'e') || (first == 'v' && second == 'e') ||
      (first == 'l' && second == 'l')) {
    return 3;
  }
  return 0;
}

// \s+(?!\S)|\s+ at a whitespace character, preceded for Llama 3 by \s*[\r\n]+.
size_t match_whitespace(const Segment& s, size_t pos, bool has_newline_rule) {
  const size_t run_end = s.run_end(pos, CharClass::Space);
  if (has_newline_rule) {
    // \s*[\r\n]+ backtracks from the end of the run to its last newline.
    for (size_t k = run_end; k-- > pos;) {
      if (is_newline(s.codepoint(k))) return k + 1 - pos;
    }
  }
  // \s+(?!\S): the whole run at the end; else all but the last whitespace character, which
  // then prefixes the next word. A lone whitespace character before a word falls to \s+.
  if (run_end >= s.end || run_end - pos == 1) return run_end - pos;
  return run_end - 1 - pos;
}

size_t match_gpt2(const Segment& s, size_t pos) {
  if (const size_t n = match_contraction(s, pos, false)) return n;
  // ' ?\p{L}+', ' ?\p{N}+', ' ?[^\s\p{L}\p{N}]+': at most one of them can match.
  const size_t start = s.codepoint(pos) == ' ' ? pos + 1 : pos;
  for (const CharClass cls : {CharClass::Letter, CharClass::Number, CharClass::Other}) {
    if (s.is(start, cls)) return s.run_end(start, cls) - pos;
  }
  return match_whitespace(s, pos, false);
}

size_t match_llama3(const Segment& s, size_t pos, size_t max_digits) {
  if (const size_t n = match_contraction(s, pos, true)) return n;
  // [^\r\n\p{L}\p{N}]?\p{L}+
  if (s.is(pos, CharClass::Letter)) return s.run_end(pos, CharClass::Letter) - pos;
  if (!s.is(pos, CharClass::Number) && !is_newline(s.codepoint(pos)) &&
      s.is(pos + 1, CharClass::Letter)) {
    return s.run_end(pos + 1, CharClass::Letter) - pos;
  }
  // \p{N}{1,3} (Qwen2: \p{N})
  if (s.is(pos, CharClass::Number)) {
    return std::min(s.run_end(pos, CharClass::Number) - pos, max_digits);
  }
  // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
  const size_t start = s.codepoint(pos) == ' ' ? pos + 1 : pos;
  if (s.is(start, CharClass::Other)) {
    size_t end = s.run_end(start, CharClass::Other);
    while (end < s.end && is_newline(s.codepoint(end))) ++end;
    return end - pos;
  }
  return match_whitespace(s, pos, true);
}

size_t match_word(const Segment& s, size_t pos, PreTokenizer kind) {
  switch (kind) {
    case PreTokenizer::Gpt2:
    case PreTokenizer::Gpt2IsolatedDigits:
      return match_gpt2(s, pos);
    case PreTokenizer::Llama3:
      return match_llama3(s, pos, 3);
    case PreTokenizer::Qwen2:
      return match_llama3(s, pos, 1);
  }
  return 1;
}

}  // namespace

std::vector<std::string_view> pre_tokenize(std::string_view text, PreTokenizer kind) {
  const Chars chars = decode_chars(text);
  const size_t num_chars = chars.codepoints.size();
  std::vector<std::string_view> words;
  const auto add_word = [&](size_t begin, size_t end) {
    words.push_back(text.substr(chars.offsets[begin], chars.offsets[end] - chars.offsets[begin]));
  };

  size_t pos = 0;
  while (pos < num_chars) {
    size_t segment_end = num_chars;
    if (kind == PreTokenizer::Gpt2IsolatedDigits) {
      if (chars.classes[pos] == CharClass::Number) {
        add_word(pos, pos + 1);
        ++pos;
        continue;
      }
      segment_end = pos;
      while (segment_end < num_chars && chars.classes[segment_end] != CharClass::Number) {
        ++segment_end;
      }
    }
    const Segment segment{chars, segment_end};
    while (pos < segment_end) {
      const size_t length = std::max<size_t>(1, match_word(segment, pos, kind));
      add_word(pos, pos + length);
      pos += length;
    }
  }
  return words;
}

std::optional<PreTokenizer> pre_tokenizer_from_gguf_name(std::string_view name) {
  // Older GGUF files carry no tokenizer.ggml.pre ("" here) or "default"; GPT-2's pattern is the
  // one the byte-level BPE vocabularies of that era were trained with.
  for (const std::string_view gpt2 : {"", "default", "gpt-2", "gpt2", "phi-2", "mpt", "olmo",
                                      "jais", "jina-es", "jina-de", "jina-v2-es", "jina-v2-de"}) {
    if (name == gpt2) return PreTokenizer::Gpt2;
  }
  for (const std::string_view digits :
       {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"}) {
    if (name == digits) return PreTokenizer::Gpt2IsolatedDigits;
  }
  for (const std::string_view llama3 :
       {"llama3", "llama-v3", "llama-bpe", "dbrx", "smaug-bpe", "falcon3", "pixtral"}) {
    if (name == llama3) return PreTokenizer::Llama3;
  }
  for (const std::string_view qwen2 : {"qwen2", "deepseek-r1-qwen", "stablelm2", "megrez"}) {
    if (name == qwen2) return PreTokenizer::Qwen2;
  }
  return std::nullopt;
}

std::string_view pre_tokenizer_name(PreTokenizer kind) {
  switch (kind) {
    case PreTokenizer::Gpt2:
      return "gpt2";
    case PreTokenizer::Gpt2IsolatedDigits:
      return "gpt2-digits";
    case PreTokenizer::Llama3:
      return "llama3";
    case PreTokenizer::Qwen2:
      return "qwen2";
  }
  return "?";
}

}  // namespace sluice
