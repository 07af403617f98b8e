#include "engine/grammar/json_schema_validator_values.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <numeric>
#include <string_view>

namespace sluice {
namespace {

using nlohmann::json;

long double number_as_long_double(const json& value) {
  if (value.is_number_unsigned()) return static_cast<long double>(value.get<uint64_t>());
  if (value.is_number_integer()) return static_cast<long double>(value.get<int64_t>());
  return static_cast<long double>(value.get<double>());
}

// |value| as mantissa * 10^exponent, from the shortest decimal spelling of a double.
struct Decimal {
  uint64_t mantissa = 0;
  int exponent = 0;
};

Decimal decimal_of(const json& value) {
  Decimal out;
  if (value.is_number_unsigned()) {
    out.mantissa = value.get<uint64_t>();
  } else if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    out.mantissa = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  } else {
    char buffer[64];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, std::fabs(value.get<double>()),
                                   std::chars_format::scientific);
    std::string_view text(buffer, static_cast<size_t>(end - buffer));  // d[.ddd]e±XX
    size_t e = text.find('e');
    int num_fraction_digits = 0;
    bool in_fraction = false;
    for (char c : text.substr(0, e)) {
      if (c == '.') {
        in_fraction = true;
      } else {
        out.mantissa = out.mantissa * 10 + static_cast<uint64_t>(c - '0');
        if (in_fraction) ++num_fraction_digits;
      }
    }
    int exponent = 0;
    std::string_view exponent_text = text.substr(e + 1);
    if (exponent_text.starts_with('+')) exponent_text.remove_prefix(1);
    std::from_chars(exponent_text.data(), exponent_text.data() + exponent_text.size(), exponent);
    out.exponent = exponent - num_fraction_digits;
  }
  while (out.mantissa != 0 && out.mantissa % 10 == 0) {
    out.mantissa /= 10;
    ++out.exponent;
  }
  return out;
}

// A hash under which JSON-equal values (1 and 1.0) collide.
size_t json_hash(const json& value) {
  size_t h = static_cast<size_t>(value.type() == json::value_t::number_unsigned ||
                                         value.type() == json::value_t::number_integer
                                     ? json::value_t::number_float
                                     : value.type());
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (value.is_number()) {
    mix(std::hash<long double>{}(number_as_long_double(value)));
  } else if (value.is_string()) {
    mix(std::hash<std::string>{}(value.get_ref<const std::string&>()));
  } else if (value.is_boolean()) {
    mix(value.get<bool>() ? 1 : 2);
  } else if (value.is_array()) {
    for (const json& element : value) mix(json_hash(element));
  } else if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      mix(std::hash<std::string>{}(key));
      mix(json_hash(member));
    }
  }
  return h;
}

}  // namespace

// Returns -1, 0 or 1 as a < b, a == b, a > b; exact for two integers.
int compare_numbers(const json& a, const json& b) {
  if (a.is_number_float() || b.is_number_float()) {
    long double x = number_as_long_double(a), y = number_as_long_double(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  const bool a_negative = !a.is_number_unsigned() && a.get<int64_t>() < 0;
  const bool b_negative = !b.is_number_unsigned() && b.get<int64_t>() < 0;
  if (a_negative != b_negative) return a_negative ? -1 : 1;
  if (a_negative) {
    int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  uint64_t x = a.get<uint64_t>(), y = b.get<uint64_t>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

bool is_integer_value(const json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  double d = value.get<double>();
  return std::isfinite(d) && d == std::floor(d);
}

// Whether value is an integer multiple of divisor (> 0), exactly on their decimal spellings.
bool is_multiple_of(const json& value, const json& divisor) {
  Decimal x = decimal_of(value), m = decimal_of(divisor);
  if (x.mantissa == 0) return true;
  int shift = x.exponent - m.exponent;
  if (shift >= 0) {
    // m.mantissa must divide x.mantissa * 10^shift: what of it x.mantissa does not cover must be
    // made of at most `shift` twos and fives.
    uint64_t rest = m.mantissa / std::gcd(x.mantissa, m.mantissa);
    int num_twos = 0, num_fives = 0;
    while (rest % 2 == 0) rest /= 2, ++num_twos;
    while (rest % 5 == 0) rest /= 5, ++num_fives;
    return rest == 1 && num_twos <= shift && num_fives <= shift;
  }
  // m.mantissa * 10^-shift must divide x.mantissa; past uint64's range it exceeds it.
  uint64_t scaled = m.mantissa;
  for (int i = 0; i < -shift; ++i) {
    if (scaled > UINT64_MAX / 10) return false;
    scaled *= 10;
  }
  return x.mantissa % scaled == 0;
}

size_t count_code_points(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// Returns the first index pair (i < j) of equal elements, or nullopt when all differ.
std::optional<std::pair<size_t, size_t>> find_duplicate(const json& array) {
  std::vector<std::pair<size_t, size_t>> hashed;  // (hash, index)
  hashed.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i) hashed.emplace_back(json_hash(array[i]), i);
  std::sort(hashed.begin(), hashed.end());
  for (size_t start = 0; start < hashed.size();) {
    size_t end = start + 1;
    while (end < hashed.size() && hashed[end].first == hashed[start].first) ++end;
    for (size_t a = start; a < end; ++a) {
      for (size_t b = a + 1; b < end; ++b) {
        if (array[hashed[a].second] == array[hashed[b].second]) {
          return std::pair{hashed[a].second, hashed[b].second};
        }
      }
    }
    start = end;
  }
  return std::nullopt;
}

}  // namespace sluice
