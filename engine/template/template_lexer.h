// The template lexer: splits source into text and the tokens inside {{ }}, {% %} tags, the
// way Jinja2's lexer does under transformers' settings. Whitespace control is applied here, as
// in Jinja2: `-` strips whitespace beside a tag, `+` turns off lstrip_blocks / trim_blocks for a
// tag, lstrip_blocks removes a block or comment tag's indentation, trim_blocks removes the one
// newline after a block or comment tag. Comments vanish and {% raw %} bodies become text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::jinja {

enum class TokenKind : uint8_t {
  Data,           // template text
  VariableBegin,  // {{
  VariableEnd,    // }}
  BlockBegin,     // {%
  BlockEnd,       // %}
  Name,
  String,
  Integer,
  Float,
  Operator,
  End,  // end of the template
};

struct Token {
  TokenKind kind = TokenKind::End;
  uint32_t offset = 0;  // byte offset in the normalized source
  std::string text;     // Data text, a name, a decoded string literal, or the operator
  int64_t int_value = 0;
  double float_value = 0.0;
};

// Returns source with \r\n and \r turned into \n and one trailing newline removed
// (keep_trailing_newline=False), as Jinja2 reads a template.
std::string normalize_template_source(std::string_view source);

// Tokenizes normalized source; the last token is End. Throws sluice::Error naming the line and
// column of an unterminated tag, comment or string, or a character that starts no token.
std::vector<Token> tokenize_template(std::string_view source);

}  // namespace sluice::jinja
