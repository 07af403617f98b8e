// Line and column of a byte offset in template source, for error messages.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sluice::jinja {

struct SourcePosition {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in characters
};

// Returns the position of byte `offset` in source (clamped to the end).
SourcePosition locate_offset(std::string_view source, size_t offset);

// Returns "line L, column C" for offset.
std::string describe_offset(std::string_view source, size_t offset);

// Throws sluice::Error("template syntax error at line L, column C: <message>").
[[noreturn]] void fail_syntax(std::string_view source, size_t offset, const std::string& message);

}  // namespace sluice::jinja
