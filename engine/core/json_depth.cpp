#include "engine/core/json_depth.h"

#include "engine/core/error.h"

namespace sluice {

std::optional<size_t> find_json_nesting_past(std::string_view text, int max_depth) {
  int depth = 0;
  bool is_in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (is_in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        is_in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        is_in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;  // unbalanced closers are the parser's to report
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::string text_position(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return str_cat("line ", line, ", column ", offset - line_start + 1);
}

}  // namespace sluice
