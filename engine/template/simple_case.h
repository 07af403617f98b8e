// Case mapping for the template string functions (upper, lower, title, capitalize). Python maps
// every script; this covers the scripts chat data is written in most (Latin with its extensions,
// Greek, Cyrillic, Armenian, fullwidth Latin) with simple one-to-one mappings, plus the few
// one-to-many upper-case mappings of those scripts ("ß" -> "SS"). Other characters are
// returned unchanged.
#pragma once

#include <string>

namespace sluice::jinja {

// Returns the lower-case form of codepoint (itself when it has none in the covered scripts).
char32_t simple_lower(char32_t codepoint);

// Returns the upper-case form of codepoint (itself when it has none in the covered scripts).
char32_t simple_upper(char32_t codepoint);

// Appends the full upper-case form of codepoint to out as UTF-8 ("ß" becomes "SS").
void append_upper(std::string& out, char32_t codepoint);

// Appends the full lower-case form of codepoint to out as UTF-8 ("İ" becomes "i̇").
void append_lower(std::string& out, char32_t codepoint);

// Returns true when codepoint has a case (Python's "cased" characters, within the covered scripts).
bool is_cased(char32_t codepoint);

// Returns true for a cased letter in lower case.
bool is_lower_case(char32_t codepoint);

// Returns true for a cased letter in upper case.
bool is_upper_case(char32_t codepoint);

}  // namespace sluice::jinja
