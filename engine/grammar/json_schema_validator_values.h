// JSON values as JSON Schema compares them: numbers by value whatever their spelling (1 == 1.0),
// integers exactly, multipleOf on decimal spellings, string lengths in code points, duplicates by
// JSON equality.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

namespace sluice {

// Returns -1, 0 or 1 as a < b, a == b, a > b (both numbers); exact for two integers, long double
// for a float.
int compare_numbers(const nlohmann::json& a, const nlohmann::json& b);

// Whether value is a number with no fraction (1 and 1.0, not 1.5).
bool is_integer_value(const nlohmann::json& value);

// Whether value is an integer multiple of divisor (> 0), exactly on the shortest decimal
// spelling of each (a double's spelling has at most 17 significant digits).
bool is_multiple_of(const nlohmann::json& value, const nlohmann::json& divisor);

// Returns the number of code points of UTF-8 text.
size_t count_code_points(const std::string& text);

// Returns the first pair of indices (i < j) of JSON-equal elements of array, or nullopt.
std::optional<std::pair<size_t, size_t>> find_duplicate(const nlohmann::json& array);

}  // namespace sluice
