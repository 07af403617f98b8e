// Python's number semantics where they differ from C++: float repr (what str(), print and
// json.dumps show), floor division and modulo that round toward minus infinity, round() with
// ties to even, int()/float() parsing, and slice index resolution.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace sluice::jinja {

// Returns repr(value) as Python prints it: "1.0", "0.1", "1e+16", "1e-05", "inf", "nan".
std::string python_float_repr(double value);

// Python's a // b on integers: rounds toward minus infinity. Precondition: b != 0, and not
// INT64_MIN // -1.
int64_t python_floor_div(int64_t a, int64_t b);
// Python's a % b on integers: the result has the sign of b. Precondition: b != 0.
int64_t python_mod(int64_t a, int64_t b);

// Python's a // b on floats. Precondition: b != 0.
double python_floor_div(double a, double b);
// Python's a % b on floats (the sign of b, a zero signed like b). Precondition: b != 0.
double python_mod(double a, double b);

// round(value, ndigits) on a float: correctly rounded, exact ties to even.
double python_round(double value, int64_t ndigits);

// int(text, base): optional surrounding whitespace, sign, digits with single underscores
// between them, a 0x/0o/0b prefix when base is 16/8/2 or 0. Returns nullopt when invalid.
std::optional<int64_t> python_parse_int(std::string_view text, int base);

// float(text): decimal or scientific notation, "inf", "nan", surrounding whitespace.
std::optional<double> python_parse_float(std::string_view text);

// The indices a slice [start:stop:step] selects from a sequence: first, first + step, ... (count
// of them), all within the sequence.
struct SliceRange {
  int64_t first = 0;
  int64_t step = 1;
  int64_t count = 0;
};

// Returns the indices of [start:stop:step] in a sequence of `length` items, with Python's
// clamping of out-of-range and negative bounds. Precondition: step != 0, length >= 0.
SliceRange python_slice_range(int64_t length, std::optional<int64_t> start,
                              std::optional<int64_t> stop, int64_t step);

}  // namespace sluice::jinja
