// The JSON Schema formats a validator asserts: date, time, date-time and duration (RFC 3339 and
// its appendix A), email (RFC 5322's addr-spec without comments or folding: a dot-atom or quoted
// local part, a host name or an address literal), hostname (RFC 1123; A-labels are not decoded),
// ipv4 (dotted quad, no leading zeros), ipv6 (RFC 4291, no zone), uri (RFC 3986, absolute) and
// uuid (RFC 4122's 8-4-4-4-12 hex). Other formats are annotations.
#pragma once

#include <optional>
#include <string_view>

namespace sluice {

// Returns whether text is a valid `format`, or nullopt when the format is not one of those above.
std::optional<bool> json_schema_format_matches(std::string_view format, std::string_view text);

}  // namespace sluice
