#include "engine/template/template_lexer.h"

#include <array>

#include "engine/core/error.h"
#include "engine/template/python_number.h"
#include "engine/template/python_string.h"
#include "engine/template/source_location.h"
#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

// Longest first, so that "//" wins over "/" and "**" over "*".
constexpr std::array<std::string_view, 26> kOperators{
    "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
    "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};

bool is_ascii_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_name_char(char c) {
  return is_name_start(c) || is_digit(c);
}

int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  explicit Lexer(std::string_view source) : source_(source) {}

  std::vector<Token> run() {
    while (pos_ < source_.size()) lex_next();
    push(TokenKind::End, source_.size());
    return std::move(tokens_);
  }

 private:
  bool starts_with(size_t pos, std::string_view text) const {
    return source_.substr(pos, text.size()) == text;
  }

  void push(TokenKind kind, size_t offset, std::string text = {}) {
    Token token;
    token.kind = kind;
    token.offset = static_cast<uint32_t>(offset);
    token.text = std::move(text);
    tokens_.push_back(std::move(token));
  }

  // Skips Unicode whitespace (what Jinja2's `-` strips) from pos; returns the new position.
  size_t skip_whitespace(size_t pos) const {
    while (pos < source_.size()) {
      const Utf8Char c = decode_utf8(source_, pos);
      if (c.status != Utf8Status::Valid || !is_python_space(c.codepoint)) break;
      pos += c.num_bytes;
    }
    return pos;
  }

  // Records whether the text just consumed ended a line: lstrip_blocks strips the indentation of
  // a tag at the very start of the following text only then.
  void mark_consumed_until(size_t end) {
    line_starting_ = end > 0 && source_[end - 1] == '\n';
    pos_ = end;
  }

  // Applies `-` / lstrip_blocks to the text before a tag and emits it.
  void emit_text_before_tag(size_t begin, size_t end, char sign, bool is_variable) {
    std::string_view text = source_.substr(begin, end - begin);
    std::string stripped;
    if (sign == '-') {
      stripped = python_strip(text, std::nullopt, StripSide::Right);
      text = stripped;
    } else if (sign != '+' && !is_variable) {
      const size_t line_start = text.rfind('\n') + 1;  // 0 when there is no newline
      const std::string_view indent = text.substr(line_start);
      if ((line_start > 0 || line_starting_) && python_is_space(indent)) {
        text = text.substr(0, line_start);
      }
    }
    if (!text.empty()) push(TokenKind::Data, begin, std::string(text));
  }

  void lex_next() {
    size_t tag = source_.find('{', pos_);
    while (tag != std::string_view::npos && tag + 1 < source_.size() && source_[tag + 1] != '{' &&
           source_[tag + 1] != '%' && source_[tag + 1] != '#') {
      tag = source_.find('{', tag + 1);
    }
    if (tag == std::string_view::npos || tag + 1 >= source_.size()) {
      push(TokenKind::Data, pos_, std::string(source_.substr(pos_)));
      pos_ = source_.size();
      return;
    }
    const char kind = source_[tag + 1];
    size_t body = tag + 2;
    const char sign =
        body < source_.size() && (source_[body] == '-' || source_[body] == '+') ? source_[body] : 0;
    if (sign != 0) ++body;
    const size_t raw_end = kind == '%' ? match_raw_begin(body) : std::string_view::npos;
    emit_text_before_tag(pos_, tag, sign, kind == '{');
    if (raw_end != std::string_view::npos) {
      mark_consumed_until(raw_end);
      lex_raw_body(tag);
    } else if (kind == '#') {
      lex_comment(tag, body);
    } else {
      lex_tag(tag, body, kind == '%');
    }
  }

  // Returns the end of `\s*raw\s*(-%}\s*|%})` at pos, or npos.
  size_t match_raw_begin(size_t pos) const {
    pos = skip_whitespace(pos);
    if (!starts_with(pos, "raw")) return std::string_view::npos;
    pos = skip_whitespace(pos + 3);
    if (starts_with(pos, "-%}")) return skip_whitespace(pos + 3);
    if (starts_with(pos, "%}")) return pos + 2;
    return std::string_view::npos;
  }

  // Finds `{%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?)` after a raw tag and emits the body as text.
  void lex_raw_body(size_t tag) {
    for (size_t start = source_.find("{%", pos_); start != std::string_view::npos;
         start = source_.find("{%", start + 1)) {
      size_t pos = start + 2;
      const char sign =
          pos < source_.size() && (source_[pos] == '-' || source_[pos] == '+') ? source_[pos] : 0;
      if (sign != 0) ++pos;
      pos = skip_whitespace(pos);
      if (!starts_with(pos, "endraw")) continue;
      pos = skip_whitespace(pos + 6);
      size_t end = std::string_view::npos;
      if (starts_with(pos, "+%}")) {
        end = pos + 3;
      } else if (starts_with(pos, "-%}")) {
        end = skip_whitespace(pos + 3);
      } else if (starts_with(pos, "%}")) {
        end = pos + 2 + (starts_with(pos + 2, "\n") ? 1 : 0);
      }
      if (end == std::string_view::npos) continue;
      emit_text_before_tag(pos_, start, sign, false);
      mark_consumed_until(end);
      return;
    }
    fail_syntax(source_, tag, "missing end of raw directive ({% endraw %})");
  }

  void lex_comment(size_t tag, size_t body) {
    const size_t close = source_.find("#}", body);
    if (close == std::string_view::npos) fail_syntax(source_, tag, "missing end of comment tag");
    const char sign = close > body ? source_[close - 1] : 0;
    size_t end = close + 2;
    if (sign == '-') {
      end = skip_whitespace(end);
    } else if (sign != '+' && starts_with(end, "\n")) {
      ++end;  // trim_blocks
    }
    mark_consumed_until(end);
  }

  // Returns the end of the tag's closing delimiter at pos (whitespace control applied), or npos.
  size_t match_tag_end(size_t pos, bool is_block) const {
    if (is_block) {
      if (starts_with(pos, "+%}")) return pos + 3;
      if (starts_with(pos, "-%}")) return skip_whitespace(pos + 3);
      if (starts_with(pos, "%}")) return pos + 2 + (starts_with(pos + 2, "\n") ? 1 : 0);
      return std::string_view::npos;
    }
    if (starts_with(pos, "-}}")) return skip_whitespace(pos + 3);
    if (starts_with(pos, "}}")) return pos + 2;
    return std::string_view::npos;
  }

  void lex_tag(size_t tag, size_t pos, bool is_block) {
    push(is_block ? TokenKind::BlockBegin : TokenKind::VariableBegin, tag);
    std::vector<char> open_brackets;  // the closers expected, innermost last
    while (true) {
      if (pos >= source_.size()) {
        fail_syntax(source_, tag,
                    is_block ? "unexpected end of template: '{%' tag is never closed with '%}'"
                             : "unexpected end of template: '{{' is never closed with '}}'");
      }
      if (open_brackets.empty()) {
        const size_t end = match_tag_end(pos, is_block);
        if (end != std::string_view::npos) {
          push(is_block ? TokenKind::BlockEnd : TokenKind::VariableEnd, pos);
          mark_consumed_until(end);
          return;
        }
      }
      const char c = source_[pos];
      if (is_ascii_space(c)) {
        ++pos;
      } else if (is_digit(c)) {
        pos = lex_number(pos);
      } else if (is_name_start(c)) {
        const size_t start = pos;
        while (pos < source_.size() && is_name_char(source_[pos])) ++pos;
        push(TokenKind::Name, start, std::string(source_.substr(start, pos - start)));
      } else if (c == '\'' || c == '"') {
        pos = lex_string(pos);
      } else {
        pos = lex_operator(pos, open_brackets);
      }
    }
  }

  // Matches (\d+_)*\d+ at pos; returns its end, or pos when there is no digit.
  size_t match_digit_run(size_t pos) const {
    size_t end = pos;
    while (end < source_.size() && is_digit(source_[end])) {
      while (end < source_.size() && is_digit(source_[end])) ++end;
      if (end + 1 < source_.size() && source_[end] == '_' && is_digit(source_[end + 1])) ++end;
    }
    return end;
  }

  // Matches a float literal at pos (Jinja2's float_re); returns its end or npos.
  size_t match_float(size_t pos) const {
    if (pos > 0 && source_[pos - 1] == '.') return std::string_view::npos;
    size_t end = match_digit_run(pos);
    bool has_fraction = false;
    if (starts_with(end, ".") && match_digit_run(end + 1) > end + 1) {
      end = match_digit_run(end + 1);
      has_fraction = true;
    }
    if (end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
      size_t exponent = end + 1;
      if (exponent < source_.size() && (source_[exponent] == '+' || source_[exponent] == '-')) {
        ++exponent;
      }
      const size_t exponent_end = match_digit_run(exponent);
      if (exponent_end > exponent) return exponent_end;
    }
    return has_fraction ? end : std::string_view::npos;
  }

  size_t lex_number(size_t pos) {
    const size_t float_end = match_float(pos);
    if (float_end != std::string_view::npos) {
      const std::string text(source_.substr(pos, float_end - pos));
      push(TokenKind::Float, pos, text);
      tokens_.back().float_value = python_parse_float(text).value_or(0.0);
      return float_end;
    }
    size_t end = pos + 1;
    int base = 10;
    if (source_[pos] == '0' && end < source_.size() &&
        std::string_view("xXoObB").find(source_[end]) != std::string_view::npos) {
      const char tag = static_cast<char>(source_[end] | 0x20);
      base = tag == 'x' ? 16 : tag == 'o' ? 8 : 2;
      ++end;
      while (end < source_.size() && (source_[end] == '_' || hex_value(source_[end]) >= 0)) ++end;
    } else if (source_[pos] == '0') {
      while (end < source_.size() && (source_[end] == '0' || source_[end] == '_')) ++end;
    } else {
      end = match_digit_run(pos);
    }
    const std::string text(source_.substr(pos, end - pos));
    const std::optional<int64_t> value = python_parse_int(text, base == 10 ? 10 : 0);
    if (!value) fail_syntax(source_, pos, str_cat("invalid integer literal '", text, "'"));
    push(TokenKind::Integer, pos, text);
    tokens_.back().int_value = *value;
    return end;
  }

  size_t lex_operator(size_t pos, std::vector<char>& open_brackets) {
    for (const std::string_view op : kOperators) {
      if (!starts_with(pos, op)) continue;
      const char c = op[0];
      if (op.size() == 1 && (c == '(' || c == '[' || c == '{')) {
        open_brackets.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
      } else if (op.size() == 1 && (c == ')' || c == ']' || c == '}')) {
        if (open_brackets.empty()) fail_syntax(source_, pos, str_cat("unexpected '", c, "'"));
        if (open_brackets.back() != c) {
          fail_syntax(source_, pos,
                      str_cat("unexpected '", c, "', expected '", open_brackets.back(), "'"));
        }
        open_brackets.pop_back();
      }
      push(TokenKind::Operator, pos, std::string(op));
      return pos + op.size();
    }
    const Utf8Char c = decode_utf8(source_, pos);
    fail_syntax(source_, pos,
                str_cat("unexpected character '", source_.substr(pos, c.num_bytes), "'"));
  }

  size_t lex_string(size_t pos) {
    const char quote = source_[pos];
    std::string value;
    size_t i = pos + 1;
    while (true) {
      if (i >= source_.size()) fail_syntax(source_, pos, "unterminated string literal");
      const char c = source_[i];
      if (c == quote) break;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= source_.size()) fail_syntax(source_, pos, "unterminated string literal");
      i = decode_escape(i, value);
    }
    push(TokenKind::String, pos, std::move(value));
    return i + 1;
  }

  // Decodes the escape at source_[pos] == '\\' the way Python's unicode-escape codec does;
  // returns the position after it.
  size_t decode_escape(size_t pos, std::string& out) const {
    const char c = source_[pos + 1];
    switch (c) {
      case '\n':
        return pos + 2;  // line continuation
      case '\\':
        out += '\\';
        return pos + 2;
      case '\'':
        out += '\'';
        return pos + 2;
      case '"':
        out += '"';
        return pos + 2;
      case 'a':
        out += '\a';
        return pos + 2;
      case 'b':
        out += '\b';
        return pos + 2;
      case 'f':
        out += '\f';
        return pos + 2;
      case 'n':
        out += '\n';
        return pos + 2;
      case 'r':
        out += '\r';
        return pos + 2;
      case 't':
        out += '\t';
        return pos + 2;
      case 'v':
        out += '\v';
        return pos + 2;
      case 'x':
        return decode_hex_escape(pos, 2, out);
      case 'u':
        return decode_hex_escape(pos, 4, out);
      case 'U':
        return decode_hex_escape(pos, 8, out);
      default:
        break;
    }
    if (c >= '0' && c <= '7') {
      char32_t value = 0;
      size_t i = pos + 1;
      for (int n = 0; n < 3 && i < source_.size() && source_[i] >= '0' && source_[i] <= '7'; ++n) {
        value = value * 8 + static_cast<char32_t>(source_[i++] - '0');
      }
      append_utf8(out, value);
      return i;
    }
    out += '\\';  // Python keeps unknown escapes as they are
    return pos + 1;
  }

  size_t decode_hex_escape(size_t pos, int num_digits, std::string& out) const {
    char32_t value = 0;
    for (int n = 0; n < num_digits; ++n) {
      const size_t i = pos + 2 + static_cast<size_t>(n);
      const int digit = i < source_.size() ? hex_value(source_[i]) : -1;
      if (digit < 0) {
        fail_syntax(source_, pos,
                    num_digits == 2   ? "truncated \\xXX escape"
                    : num_digits == 4 ? "truncated \\uXXXX escape"
                                      : "truncated \\UXXXXXXXX escape");
      }
      value = value * 16 + static_cast<char32_t>(digit);
    }
    if (value > 0x10FFFF) fail_syntax(source_, pos, "illegal Unicode character in escape");
    append_utf8(out, value);
    return pos + 2 + static_cast<size_t>(num_digits);
  }

  std::string_view source_;
  size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<Token> tokens_;
};

}  // namespace

std::string normalize_template_source(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      out += source[i];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::vector<Token> tokenize_template(std::string_view source) {
  return Lexer(source).run();
}

}  // namespace sluice::jinja
