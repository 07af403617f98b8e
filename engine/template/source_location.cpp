#include "engine/template/source_location.h"

#include <algorithm>

#include "engine/core/error.h"

namespace sluice::jinja {

SourcePosition locate_offset(std::string_view source, size_t offset) {
  offset = std::min(offset, source.size());
  SourcePosition position;
  for (size_t i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++position.line;
      position.column = 1;
    } else if ((static_cast<unsigned char>(source[i]) & 0xC0) != 0x80) {
      ++position.column;  // count characters, not UTF-8 continuation bytes
    }
  }
  return position;
}

std::string describe_offset(std::string_view source, size_t offset) {
  const SourcePosition position = locate_offset(source, offset);
  return str_cat("line ", position.line, ", column ", position.column);
}

void fail_syntax(std::string_view source, size_t offset, const std::string& message) {
  fail("template syntax error at ", describe_offset(source, offset), ": ", message);
}

}  // namespace sluice::jinja
