#include "engine/template/python_number.h"

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace sluice::jinja {

namespace {

std::string_view trim_ascii_space(std::string_view text) {
  const auto is_space = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return text;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'z') return c - 'a' + 10;
  if (c >= 'A' && c <= 'Z') return c - 'A' + 10;
  return 99;
}

// Removes single underscores between digits; returns false when an underscore is misplaced.
bool strip_digit_underscores(std::string_view text, std::string& out) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '_') {
      out += text[i];
      continue;
    }
    const bool digit_before = i > 0 && digit_value(text[i - 1]) < 36;
    const bool digit_after = i + 1 < text.size() && digit_value(text[i + 1]) < 36;
    if (!digit_before || !digit_after) return false;
  }
  return true;
}

// Returns true for [digits][.digits][e[sign]digits] with at least one mantissa digit.
bool is_decimal_float(std::string_view text) {
  size_t i = 0;
  size_t num_digits = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++num_digits;
  if (i < text.size() && text[i] == '.') {
    ++i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i, ++num_digits;
  }
  if (num_digits == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const size_t exponent_start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    if (i == exponent_start) return false;
  }
  return i == text.size();
}

bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
  }
  return true;
}

}  // namespace

std::string python_float_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest digits that round-trip, then Python's layout: positional for exponents in
  // [-5, 16), scientific with a two-digit exponent otherwise.
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), std::fabs(value),
                                    std::chars_format::scientific);
  const std::string_view sci(buffer.data(), static_cast<size_t>(result.ptr - buffer.data()));
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (const char c : sci.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  const int exponent = std::atoi(std::string(sci.substr(e_pos + 1)).c_str());
  std::string out = std::signbit(value) ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) out.append(".").append(digits, 1);
    out += exponent < 0 ? "e-" : "e+";
    const int magnitude = std::abs(exponent);
    if (magnitude < 10) out += '0';
    out += std::to_string(magnitude);
  } else if (exponent < 0) {
    out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
  } else {
    const auto num_int_digits = static_cast<size_t>(exponent + 1);
    if (digits.size() <= num_int_digits) {
      out.append(digits).append(num_int_digits - digits.size(), '0').append(".0");
    } else {
      out.append(digits, 0, num_int_digits).append(".").append(digits, num_int_digits);
    }
  }
  return out;
}

int64_t python_floor_div(int64_t a, int64_t b) {
  const int64_t quotient = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? quotient - 1 : quotient;
}

int64_t python_mod(int64_t a, int64_t b) {
  const int64_t remainder = a % b;
  return (remainder != 0 && ((remainder < 0) != (b < 0))) ? remainder + b : remainder;
}

double python_floor_div(double a, double b) {
  // CPython's float_floor_div: divide what is left after the modulo, then snap to an integer.
  const double remainder = std::fmod(a, b);
  double quotient = (a - remainder) / b;
  if (remainder != 0.0 && ((b < 0) != (remainder < 0))) quotient -= 1.0;
  if (quotient == 0.0) return std::copysign(0.0, a / b);
  double floored = std::floor(quotient);
  if (quotient - floored > 0.5) floored += 1.0;
  return floored;
}

double python_mod(double a, double b) {
  double remainder = std::fmod(a, b);
  if (remainder != 0.0) {
    if ((remainder < 0) != (b < 0)) remainder += b;
  } else {
    remainder = std::copysign(0.0, b);  // Python gives the zero the sign of the divisor
  }
  return remainder;
}

double python_round(double value, int64_t ndigits) {
  if (!std::isfinite(value)) return value;
  if (ndigits == 0) return std::nearbyint(value);
  if (ndigits > 0) {
    // 2^52 and beyond have no fraction; printing them with 330 digits would not fit the buffer.
    if (ndigits > 330 || std::fabs(value) >= 4503599627370496.0) return value;
    // printf rounds the exact binary value correctly (exact ties to even), as Python does.
    std::array<char, 512> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.*f", static_cast<int>(ndigits), value);
    return std::strtod(buffer.data(), nullptr);
  }
  if (ndigits < -308) return std::copysign(0.0, value);
  const double scale = std::pow(10.0, static_cast<double>(-ndigits));
  return std::nearbyint(value / scale) * scale;
}

std::optional<int64_t> python_parse_int(std::string_view text, int base) {
  text = trim_ascii_space(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.size() > 2 && text[0] == '0') {
    const char tag = static_cast<char>(std::tolower(static_cast<unsigned char>(text[1])));
    const int prefix_base = tag == 'x' ? 16 : tag == 'o' ? 8 : tag == 'b' ? 2 : 0;
    if (prefix_base != 0 && (base == 0 || base == prefix_base)) {
      base = prefix_base;
      text.remove_prefix(text[2] == '_' ? 3 : 2);
    }
  }
  if (base == 0) base = 10;
  std::string digits;
  if (text.empty() || !strip_digit_underscores(text, digits)) return std::nullopt;
  int64_t value = 0;
  for (const char c : digits) {
    const int digit = digit_value(c);
    if (digit >= base) return std::nullopt;
    if (__builtin_mul_overflow(value, base, &value) ||
        __builtin_add_overflow(value, digit, &value)) {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

std::optional<double> python_parse_float(std::string_view text) {
  text = trim_ascii_space(text);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  double value = 0.0;
  if (equals_ignore_case(text, "inf") || equals_ignore_case(text, "infinity")) {
    value = HUGE_VAL;
  } else if (equals_ignore_case(text, "nan")) {
    value = std::nan("");
  } else {
    std::string cleaned;
    if (!strip_digit_underscores(text, cleaned) || !is_decimal_float(cleaned)) return std::nullopt;
    value = std::strtod(cleaned.c_str(), nullptr);
  }
  return negative ? -value : value;
}

SliceRange python_slice_range(int64_t length, std::optional<int64_t> start,
                              std::optional<int64_t> stop, int64_t step) {
  const auto resolve = [&](std::optional<int64_t> bound, int64_t if_absent) {
    if (!bound) return if_absent;
    int64_t index = *bound;
    if (index < 0) {
      index += length;
      if (index < 0) index = step < 0 ? -1 : 0;
    } else if (index >= length) {
      index = step < 0 ? length - 1 : length;
    }
    return index;
  };
  const int64_t first = resolve(start, step < 0 ? length - 1 : 0);
  const int64_t last = resolve(stop, step < 0 ? -1 : length);
  // Both lie in [-1, length], so their distance fits; the step's magnitude may not (INT64_MIN).
  const int64_t distance = step > 0 ? last - first : first - last;
  const uint64_t stride = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  const auto count =
      distance <= 0 ? 0 : static_cast<int64_t>((static_cast<uint64_t>(distance) - 1) / stride + 1);
  return {first, step, count};
}

}  // namespace sluice::jinja
