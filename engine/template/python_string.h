// Python's str operations on UTF-8 text, as chat templates call them (message.content.strip(),
// text.split('\n'), the trim filter, ...). Python counts and indexes codepoints, not bytes, and
// its whitespace is Unicode whitespace, so these decode UTF-8; ill-formed bytes count as one
// character each, the way they would after Python's surrogateescape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sluice::jinja {

// Returns true for the characters Python's str.isspace() and the regex \s accept.
bool is_python_space(char32_t codepoint);

// Decodes text into codepoints (an ill-formed byte becomes U+FFFD).
std::u32string to_codepoints(std::string_view text);

// Encodes codepoints as UTF-8.
std::string from_codepoints(std::u32string_view codepoints);

// Returns the number of characters Python's len() counts in text.
size_t count_codepoints(std::string_view text);

enum class StripSide : uint8_t { Left, Right, Both };

// str.strip / lstrip / rstrip: removes whitespace, or any of the characters in chars when given.
std::string python_strip(std::string_view text, const std::optional<std::string>& chars,
                         StripSide side);

// str.split(sep, maxsplit): on runs of whitespace when sep is absent, else on each sep (which
// must not be empty); maxsplit < 0 means no limit. Throws RenderFault past kMaxListItems parts.
std::vector<std::string> python_split(std::string_view text, const std::optional<std::string>& sep,
                                      int64_t maxsplit);

// str.splitlines(keepends). Throws RenderFault past kMaxListItems lines.
std::vector<std::string> python_splitlines(std::string_view text, bool keep_ends);

// str.replace(old, new, count); count < 0 replaces every occurrence. Throws RenderFault when
// the result would be longer than kMaxStringBytes.
std::string python_replace(std::string_view text, std::string_view old_text,
                           std::string_view new_text, int64_t count);

// str.find(sub, start, end) in codepoints; -1 when absent. Negative bounds count from the end.
int64_t python_find(std::string_view text, std::string_view sub, std::optional<int64_t> start,
                    std::optional<int64_t> end, bool from_right);

// str.count(sub): non-overlapping occurrences.
int64_t python_count(std::string_view text, std::string_view sub);

// str.upper() (see simple_case.h for the scripts covered).
std::string python_upper(std::string_view text);
// str.lower() (see simple_case.h for the scripts covered).
std::string python_lower(std::string_view text);

// str.title(): upper-cases the first cased character after each uncased one, lowers the rest.
std::string python_title(std::string_view text);

// str.capitalize(): first character upper-cased, the rest lower-cased.
std::string python_capitalize(std::string_view text);

// str.isspace(): non-empty and all whitespace.
bool python_is_space(std::string_view text);
// str.isalpha(): non-empty and all letters.
bool python_is_alpha(std::string_view text);
// str.isdigit(): non-empty and all digits (any Unicode number, a superset of Python's).
bool python_is_digit(std::string_view text);
// str.isalnum(): non-empty and all letters or digits.
bool python_is_alnum(std::string_view text);
// str.islower(): some cased character, and every cased one lower-case.
bool python_is_lower(std::string_view text);
// str.isupper(): some cased character, and every cased one upper-case.
bool python_is_upper(std::string_view text);

// repr() of a str: quoted with ' (or " when the text holds ' but no "), escapes as Python's.
std::string python_string_repr(std::string_view text);

}  // namespace sluice::jinja
