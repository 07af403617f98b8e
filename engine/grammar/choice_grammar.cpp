#include "engine/grammar/choice_grammar.h"

#include <cstdio>

#include "engine/core/error.h"
#include "engine/grammar/gbnf_parser.h"

namespace sluice {

std::string gbnf_literal(std::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\x%02X", c);
      out += buffer;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += '"';
  return out;
}

Grammar choice_grammar(const std::vector<std::string>& choices, const std::string& source_name) {
  if (choices.empty()) fail(source_name, ": no choices given");
  std::string text = "root ::= ";
  for (size_t i = 0; i < choices.size(); ++i) {
    if (choices[i].empty()) fail(source_name, ": choice ", i + 1, " is empty");
    if (i > 0) text += " | ";
    text += gbnf_literal(choices[i]);
  }
  return parse_gbnf(text, source_name);
}

}  // namespace sluice
