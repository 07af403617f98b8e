// Parsing JSON from strangers' files (datasets, model and tokenizer files, job rows) so that
// every failure has a place: the nesting depth is checked first (json_depth.h), and a syntax
// error, a number out of double's range or nesting past the limit comes back as a byte offset
// and a short description instead of nlohmann's exception text.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

// Why and where a text is not JSON Sluice accepts.
struct JsonParseFailure {
  size_t offset = 0;        // the byte of the text where the problem is
  std::string description;  // e.g. "syntax error while parsing value - unexpected ']'"
};

// Parses text into value (nlohmann::json or nlohmann::ordered_json). Returns nullopt on
// success, otherwise the failure (value is then unspecified). Never throws a parse exception.
template <typename BasicJson>
std::optional<JsonParseFailure> try_parse_json(std::string_view text, BasicJson& value);

// Returns "not valid JSON at line L, column C: <description>" for a failure of text.
std::string describe_json_failure(std::string_view text, const JsonParseFailure& failure);

// Returns text parsed as JSON. Throws Error "<name>: not valid JSON at line L, column C: ..."
// (name is usually the file's path) when it is not.
template <typename BasicJson>
BasicJson parse_json_text(std::string_view text, const std::string& name);

// Returns "an object", "an array", "a string", "a number", "a boolean" or "null", for errors
// about a parsed value of the wrong type.
template <typename BasicJson>
const char* json_type_name(const BasicJson& value);

}  // namespace sluice
