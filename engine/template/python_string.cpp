#include "engine/template/python_string.h"

#include <algorithm>

#include "engine/template/simple_case.h"
#include "engine/template/template_value.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

// One decoded character and the bytes it spans.
struct CharSpan {
  char32_t codepoint;
  size_t num_bytes;
};

CharSpan char_at(std::string_view text, size_t offset) {
  const Utf8Char decoded = decode_utf8(text, offset);
  if (decoded.status != Utf8Status::Valid) return {kReplacementCharacter, decoded.num_bytes};
  return {decoded.codepoint, decoded.num_bytes};
}

// Returns the start of the character that ends at `end` (> 0), treating an ill-formed tail as
// a single byte.
size_t previous_char_start(std::string_view text, size_t end) {
  size_t start = end - 1;
  size_t num_continuations = 0;
  while (start > 0 && num_continuations < 3 && (static_cast<uint8_t>(text[start]) & 0xC0) == 0x80) {
    --start;
    ++num_continuations;
  }
  const Utf8Char decoded = decode_utf8(text, start);
  if (decoded.status == Utf8Status::Valid && start + decoded.num_bytes == end) return start;
  return end - 1;
}

bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

template <typename Predicate>
bool all_chars(std::string_view text, Predicate predicate) {
  if (text.empty()) return false;
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    if (!predicate(c.codepoint)) return false;
    i += c.num_bytes;
  }
  return true;
}

// Python's islower/isupper: at least one cased character, and every cased one in the wanted case.
bool cased_chars_are(std::string_view text, bool (*in_case)(char32_t)) {
  bool has_cased = false;
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    if (is_cased(c.codepoint)) {
      if (!in_case(c.codepoint)) return false;
      has_cased = true;
    }
    i += c.num_bytes;
  }
  return has_cased;
}

void append_hex_escape(std::string& out, char prefix, uint32_t value, int num_digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '\\';
  out += prefix;
  for (int shift = (num_digits - 1) * 4; shift >= 0; shift -= 4)
    out += kHex[(value >> shift) & 0xF];
}

}  // namespace

bool is_python_space(char32_t codepoint) {
  // Python also counts the ASCII information separators (bidi classes B and S) as whitespace.
  return is_unicode_whitespace(codepoint) || (codepoint >= 0x1C && codepoint <= 0x1F);
}

std::u32string to_codepoints(std::string_view text) {
  std::u32string codepoints;
  codepoints.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    codepoints += c.codepoint;
    i += c.num_bytes;
  }
  return codepoints;
}

std::string from_codepoints(std::u32string_view codepoints) {
  std::string text;
  text.reserve(codepoints.size());
  for (const char32_t c : codepoints) append_utf8(text, c);
  return text;
}

size_t count_codepoints(std::string_view text) {
  size_t count = 0;
  for (size_t i = 0; i < text.size(); ++count) i += char_at(text, i).num_bytes;
  return count;
}

std::string python_strip(std::string_view text, const std::optional<std::string>& chars,
                         StripSide side) {
  const std::u32string strip_set = chars ? to_codepoints(*chars) : std::u32string();
  const auto strips = [&](char32_t c) {
    return chars ? strip_set.find(c) != std::u32string::npos : is_python_space(c);
  };
  size_t begin = 0;
  size_t end = text.size();
  if (side != StripSide::Right) {
    while (begin < end) {
      const CharSpan c = char_at(text, begin);
      if (!strips(c.codepoint)) break;
      begin += c.num_bytes;
    }
  }
  if (side != StripSide::Left) {
    while (end > begin) {
      const size_t start = previous_char_start(text, end);
      if (!strips(char_at(text, start).codepoint)) break;
      end = start;
    }
  }
  return std::string(text.substr(begin, end - begin));
}

std::vector<std::string> python_split(std::string_view text, const std::optional<std::string>& sep,
                                      int64_t maxsplit) {
  std::vector<std::string> parts;
  if (sep) {
    // Counted first, so that too many parts fail before any is allocated.
    size_t num_parts = 1;
    for (size_t found = text.find(*sep);
         found != std::string_view::npos &&
         (maxsplit < 0 || static_cast<int64_t>(num_parts) <= maxsplit);
         found = text.find(*sep, found + sep->size())) {
      ++num_parts;
    }
    check_list_items(num_parts, "split result");
    parts.reserve(num_parts);
    size_t start = 0;
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
      const size_t found = text.find(*sep, start);
      if (found == std::string_view::npos) break;
      parts.emplace_back(text.substr(start, found - start));
      start = found + sep->size();
    }
    parts.emplace_back(text.substr(start));
    return parts;
  }
  size_t i = 0;
  while (true) {
    while (i < text.size() && is_python_space(char_at(text, i).codepoint)) {
      i += char_at(text, i).num_bytes;
    }
    if (i >= text.size()) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      // Python keeps the remainder as it is, trailing whitespace included.
      parts.emplace_back(text.substr(i));
      break;
    }
    const size_t start = i;
    while (i < text.size()) {
      const CharSpan c = char_at(text, i);
      if (is_python_space(c.codepoint)) break;
      i += c.num_bytes;
    }
    check_list_items(parts.size() + 1, "split result");
    parts.emplace_back(text.substr(start, i - start));
  }
  return parts;
}

std::vector<std::string> python_splitlines(std::string_view text, bool keep_ends) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    if (!is_line_break(c.codepoint)) {
      i += c.num_bytes;
      continue;
    }
    size_t end = i + c.num_bytes;
    if (c.codepoint == '\r' && end < text.size() && text[end] == '\n') ++end;
    check_list_items(lines.size() + 1, "splitlines result");
    lines.emplace_back(text.substr(start, (keep_ends ? end : i) - start));
    start = i = end;
  }
  if (start < text.size()) lines.emplace_back(text.substr(start));
  return lines;
}

std::string python_replace(std::string_view text, std::string_view old_text,
                           std::string_view new_text, int64_t count) {
  std::string out;
  int64_t num_done = 0;
  if (old_text.empty()) {
    // Python inserts the replacement before every character and at the end.
    for (size_t i = 0; i < text.size();) {
      if (count < 0 || num_done < count) {
        append_bounded(out, new_text);
        ++num_done;
      }
      const size_t n = char_at(text, i).num_bytes;
      append_bounded(out, text.substr(i, n));
      i += n;
    }
    if (count < 0 || num_done < count) append_bounded(out, new_text);
    return out;
  }
  size_t start = 0;
  while (count < 0 || num_done < count) {
    const size_t found = text.find(old_text, start);
    if (found == std::string_view::npos) break;
    append_bounded(out, text.substr(start, found - start));
    append_bounded(out, new_text);
    start = found + old_text.size();
    ++num_done;
  }
  append_bounded(out, text.substr(start));
  return out;
}

int64_t python_find(std::string_view text, std::string_view sub, std::optional<int64_t> start,
                    std::optional<int64_t> end, bool from_right) {
  const std::u32string haystack = to_codepoints(text);
  const std::u32string needle = to_codepoints(sub);
  const auto length = static_cast<int64_t>(haystack.size());
  const auto resolve = [length](int64_t bound) {
    if (bound < 0) bound += length;
    return std::clamp<int64_t>(bound, 0, length);
  };
  const int64_t lo = start ? resolve(*start) : 0;
  const int64_t hi = end ? resolve(*end) : length;
  if (hi - lo < static_cast<int64_t>(needle.size())) return -1;
  const std::u32string_view window(haystack.data() + lo, static_cast<size_t>(hi - lo));
  const size_t found = from_right ? window.rfind(needle) : window.find(needle);
  return found == std::u32string_view::npos ? -1 : lo + static_cast<int64_t>(found);
}

int64_t python_count(std::string_view text, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(count_codepoints(text)) + 1;
  int64_t count = 0;
  for (size_t found = text.find(sub); found != std::string_view::npos;
       found = text.find(sub, found + sub.size())) {
    ++count;
  }
  return count;
}

std::string python_upper(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    append_upper(out, c.codepoint);
    i += c.num_bytes;
  }
  return out;
}

std::string python_lower(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    append_lower(out, c.codepoint);
    i += c.num_bytes;
  }
  return out;
}

std::string python_title(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool previous_is_cased = false;
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    if (previous_is_cased) {
      append_lower(out, c.codepoint);
    } else {
      append_upper(out, c.codepoint);
    }
    previous_is_cased = is_cased(c.codepoint);
    i += c.num_bytes;
  }
  return out;
}

std::string python_capitalize(std::string_view text) {
  if (text.empty()) return {};
  std::string out;
  out.reserve(text.size());
  const CharSpan first = char_at(text, 0);
  append_upper(out, first.codepoint);
  out += python_lower(text.substr(first.num_bytes));
  return out;
}

bool python_is_space(std::string_view text) {
  return all_chars(text, is_python_space);
}

bool python_is_alpha(std::string_view text) {
  return all_chars(text, [](char32_t c) { return is_unicode_letter(c); });
}

bool python_is_digit(std::string_view text) {
  return all_chars(text, [](char32_t c) { return is_unicode_number(c); });
}

bool python_is_alnum(std::string_view text) {
  return all_chars(text, [](char32_t c) { return is_unicode_letter(c) || is_unicode_number(c); });
}

bool python_is_lower(std::string_view text) {
  return cased_chars_are(text, is_lower_case);
}

bool python_is_upper(std::string_view text) {
  return cased_chars_are(text, is_upper_case);
}

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (size_t i = 0; i < text.size();) {
    const CharSpan c = char_at(text, i);
    const char32_t cp = c.codepoint;
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      append_hex_escape(out, 'x', cp, 2);
    } else if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      // Python prints a character as is unless it is a control, format, separator or
      // unassigned character.
      const UnicodeCategory category = unicode_category(cp);
      if (category != UnicodeCategory::Other && category != UnicodeCategory::Separator) {
        out += text.substr(i, c.num_bytes);
      } else if (cp <= 0xFF) {
        append_hex_escape(out, 'x', cp, 2);
      } else if (cp <= 0xFFFF) {
        append_hex_escape(out, 'u', cp, 4);
      } else {
        append_hex_escape(out, 'U', cp, 8);
      }
    }
    i += c.num_bytes;
  }
  out += quote;
  return out;
}

}  // namespace sluice::jinja
