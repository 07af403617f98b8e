// Text made safe for an HTML page: the five characters that mean something in markup (& < > " ')
// as entities, and bytes that would make the page invalid — invalid UTF-8, control characters
// other than tab, newline and carriage return — as U+FFFD. Generated outputs are hostile input:
// every string a report shows goes through here, in text and in attribute values alike.
#pragma once

#include <string>
#include <string_view>

namespace sluice {

// Returns text escaped as described above.
std::string html_escape(std::string_view text);

// Returns at most max_chars UTF-8 characters of text, cut at a character boundary, with "…"
// appended when it was cut.
std::string truncate_utf8(std::string_view text, size_t max_chars);

}  // namespace sluice
