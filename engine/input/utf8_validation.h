// UTF-8 validation that says where the first ill-formed byte is. The readers check every row's
// raw bytes themselves so that the error names the line and column of the bad byte, not just
// whatever a JSON parser reports for its own buffer.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Returns the byte offset of the first ill-formed or truncated UTF-8 sequence in text (overlong
// forms, surrogates and code points past U+10FFFF are ill-formed), or nullopt when text is
// well-formed.
std::optional<size_t> find_invalid_utf8(std::string_view text);

// Returns "invalid UTF-8 (byte 0xC3)" for the sequence at text[offset], for an error message.
std::string describe_invalid_utf8(std::string_view text, size_t offset);

}  // namespace sluice
