// URI references as JSON Schema's $id and $ref use them: RFC 3986 section 5.2's resolution of a
// reference against a base URI, and the split of a URI into its resource and its fragment.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace sluice {

// Returns reference resolved against the absolute URI base (RFC 3986 5.2.2, dot segments removed).
std::string resolve_uri_reference(std::string_view base, std::string_view reference);

// Returns {uri without its fragment, the fragment without '#'} ("" when there is none).
std::pair<std::string, std::string> split_uri_fragment(std::string_view uri);

// Returns token escaped for a JSON pointer (~ as ~0, / as ~1).
std::string escape_json_pointer_token(std::string_view token);

// Returns text with its %XX escapes decoded (malformed escapes are kept as written).
std::string percent_decode(std::string_view text);

}  // namespace sluice
