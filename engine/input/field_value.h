// How a row's field value reads as text, shared by field discovery and column templates so that
// "empty" means the same in the preview as in the prompt.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace sluice {

// Returns true for a value that gives a prompt nothing: null, a string of only whitespace, an
// empty array or object.
bool is_empty_field_value(const nlohmann::ordered_json& value);

// Returns a string value as it is and anything else as compact JSON (numbers without quotes).
std::string field_value_text(const nlohmann::ordered_json& value);

}  // namespace sluice
