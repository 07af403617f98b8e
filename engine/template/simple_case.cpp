#include "engine/template/simple_case.h"

#include <array>

#include "engine/tokenizer/unicode.h"

namespace sluice::jinja {

namespace {

// Upper-case letters first..last whose lower-case forms are upper + delta.
struct ShiftRange {
  char32_t first;
  char32_t last;
  int32_t delta;
};

// Pairs laid out upper, lower, upper, lower, ... from first to last (Latin Extended, Cyrillic
// supplements): the upper letter sits at an even distance from first.
struct PairRange {
  char32_t first;
  char32_t last;
};

constexpr std::array<ShiftRange, 15> kShiftRanges{{
    {0x41, 0x5A, 32},      // Basic Latin
    {0xC0, 0xD6, 32},      // Latin-1
    {0xD8, 0xDE, 32},      // Latin-1 (skips the multiplication sign)
    {0x178, 0x178, -121},  // Ÿ <-> ÿ
    {0x386, 0x386, 38},    // Greek tonos
    {0x388, 0x38A, 37},    //
    {0x38C, 0x38C, 64},    //
    {0x38E, 0x38F, 63},    //
    {0x391, 0x3A1, 32},    // Greek
    {0x3A3, 0x3AB, 32},    // Greek (skips the unassigned U+03A2)
    {0x400, 0x40F, 80},    // Cyrillic Ѐ..Џ
    {0x410, 0x42F, 32},    // Cyrillic А..Я
    {0x4C0, 0x4C0, 15},    // Ӏ <-> ӏ
    {0x531, 0x556, 48},    // Armenian
    {0xFF21, 0xFF3A, 32},  // fullwidth Latin
}};

constexpr std::array<PairRange, 12> kPairRanges{{
    {0x100, 0x12F},
    {0x132, 0x137},
    {0x139, 0x148},
    {0x14A, 0x177},
    {0x179, 0x17E},
    {0x3D8, 0x3EF},
    {0x460, 0x481},
    {0x48A, 0x4BF},
    {0x4C1, 0x4CE},
    {0x4D0, 0x52F},
    {0x1E00, 0x1E95},
    {0x1EA0, 0x1EFF},
}};

}  // namespace

char32_t simple_lower(char32_t codepoint) {
  if (codepoint < 0x80) {
    return codepoint >= 'A' && codepoint <= 'Z' ? codepoint + 32 : codepoint;
  }
  for (const ShiftRange& range : kShiftRanges) {
    if (codepoint >= range.first && codepoint <= range.last) {
      return static_cast<char32_t>(static_cast<int32_t>(codepoint) + range.delta);
    }
  }
  for (const PairRange& range : kPairRanges) {
    if (codepoint >= range.first && codepoint <= range.last && (codepoint - range.first) % 2 == 0) {
      return codepoint + 1;
    }
  }
  return codepoint;
}

char32_t simple_upper(char32_t codepoint) {
  if (codepoint < 0x80) {
    return codepoint >= 'a' && codepoint <= 'z' ? codepoint - 32 : codepoint;
  }
  switch (codepoint) {
    case 0xB5:
      return 0x39C;  // micro sign -> Greek capital mu
    case 0x131:
      return 'I';  // dotless i
    case 0x17F:
      return 'S';  // long s
    case 0x3C2:
      return 0x3A3;  // final sigma
    default:
      break;
  }
  for (const ShiftRange& range : kShiftRanges) {
    const auto lower = static_cast<int32_t>(codepoint) - range.delta;
    if (lower >= static_cast<int32_t>(range.first) && lower <= static_cast<int32_t>(range.last)) {
      return static_cast<char32_t>(lower);
    }
  }
  for (const PairRange& range : kPairRanges) {
    if (codepoint > range.first && codepoint <= range.last && (codepoint - range.first) % 2 == 1) {
      return codepoint - 1;
    }
  }
  return codepoint;
}

void append_upper(std::string& out, char32_t codepoint) {
  if (codepoint == 0xDF) {  // ß has no single upper-case letter in Python's mapping
    out += "SS";
    return;
  }
  append_utf8(out, simple_upper(codepoint));
}

void append_lower(std::string& out, char32_t codepoint) {
  if (codepoint == 0x130) {  // İ lowers to i + combining dot above
    out += 'i';
    append_utf8(out, 0x307);
    return;
  }
  append_utf8(out, simple_lower(codepoint));
}

bool is_cased(char32_t codepoint) {
  return is_lower_case(codepoint) || is_upper_case(codepoint);
}

bool is_lower_case(char32_t codepoint) {
  return codepoint == 0xDF || simple_upper(codepoint) != codepoint;
}

bool is_upper_case(char32_t codepoint) {
  return codepoint == 0x130 || simple_lower(codepoint) != codepoint;
}

}  // namespace sluice::jinja
